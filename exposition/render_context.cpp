#include "exposition/render_context.h"

#include <charconv>
#include <cstring>
#include <mutex>

#include "exposition/exposition.h"
#include "snapshot/snapshot.h"

namespace ibfx {
namespace {

std::string_view tier_in(const Topology* t, std::size_t n) {
  return t != nullptr && n < t->tier.size() ? tier_name(t->tier[n]) : "";
}

// A 64-bit hash over everything the label strings are made from, so that
// a fabric object changed in place (tests build them by hand) is not served
// stale labels. A word at a time: it runs on every render.
class Fingerprint {
 public:
  void add(std::uint64_t v) {
    h_ = (h_ ^ v) * 0x9E3779B97F4A7C15ull;
    h_ ^= h_ >> 29;
  }
  void add(std::string_view s) {
    add(s.size());
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      std::uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      add(word);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, s.data() + i, s.size() - i);
    add(tail);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

std::uint64_t fingerprint(const Fabric& f, const std::vector<std::string>& names,
                          const Topology* topology) {
  Fingerprint h;
  h.add(f.nodes.size());
  for (const FabricNode& node : f.nodes) {
    h.add(node.guid);
    h.add(static_cast<std::uint64_t>(node.type));
    h.add(node.ports.size());
    for (const FabricPort& p : node.ports) {
      h.add(std::uint64_t{p.number} | std::uint64_t{p.width_active} << 8 |
            std::uint64_t{p.speed_active} << 16 | std::uint64_t{p.speed_ext_active} << 24 |
            std::uint64_t{p.remote_port} << 32);
      h.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(p.remote_node)));
    }
  }
  h.add(names.size());
  for (const std::string& name : names) h.add(name);
  h.add(topology != nullptr ? topology->tier.size() + 1 : 0);
  if (topology != nullptr) {
    for (const Tier t : topology->tier) h.add(static_cast<std::uint64_t>(t));
  }
  return h.value();
}

void end_piece(const std::string& text, std::vector<std::uint32_t>& end) {
  end.push_back(static_cast<std::uint32_t>(text.size()));
}

std::shared_ptr<const FabricLabels> build_labels(const Fabric& f,
                                                 const std::vector<std::string>& names,
                                                 const Topology* topology, std::uint64_t print) {
  auto out = std::make_shared<FabricLabels>();
  FabricLabels& l = *out;
  l.fingerprint = print;
  const std::size_t ports = f.port_count();
  l.first_slot.reserve(f.nodes.size() + 1);
  l.node_end.reserve(f.nodes.size());
  l.port_end.reserve(ports);
  l.info_end.reserve(ports);
  l.node_text.reserve(f.nodes.size() * 32);
  l.port_text.reserve(ports * 44);
  l.info_text.reserve(ports * 240);
  std::vector<std::string> guids(f.nodes.size());
  for (std::size_t n = 0; n < f.nodes.size(); ++n) guids[n] = guid_hex(f.nodes[n].guid);
  std::uint32_t slot = 0;
  std::string scratch;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const FabricNode& node = f.nodes[n];
    l.first_slot.push_back(slot);
    scratch.clear();
    ExpositionWriter::add_label(scratch, "node_guid", guids[n]);
    l.node_text += scratch;
    end_piece(l.node_text, l.node_end);
    const std::size_t node_label = scratch.size();
    for (const FabricPort& fp : node.ports) {
      ++slot;
      scratch.resize(node_label);
      char number[4];
      const auto [end, ec] = std::to_chars(number, number + sizeof number, fp.number);
      ExpositionWriter::add_label(scratch, "port", std::string_view(number, end - number));
      l.port_text += scratch;
      end_piece(l.port_text, l.port_end);
      // Facts of the port only: the node's name, type, tier and rail are on
      // infiniband_node_info (join on node_guid), once per node instead of
      // once per port (issue #15). Link width and speed stay labels: they
      // change only when a link retrains, which is itself worth a new
      // series. The far end's name, type and tier stay here: the 2 AM reader
      // of one port sees where its cable goes, and the rules compare a link
      // with its peers without a second join through remote_node_guid.
      ExpositionWriter::add_label(scratch, "link_width", link_width_name(fp.width_active));
      ExpositionWriter::add_label(scratch, "link_speed", link_speed_name(fp));
      const bool linked = fp.linked() && static_cast<std::size_t>(fp.remote_node) < f.nodes.size();
      const auto r = static_cast<std::size_t>(fp.remote_node);
      ExpositionWriter::add_label(scratch, "remote_node_guid", linked ? guids[r] : "");
      ExpositionWriter::add_label(scratch, "remote_node_name",
                                  linked && r < names.size() ? names[r] : "");
      ExpositionWriter::add_label(scratch, "remote_port",
                                  linked ? std::to_string(fp.remote_port) : "");
      // What kind of link this is (the peers a degraded link is compared with).
      ExpositionWriter::add_label(scratch, "remote_node_type",
                                  linked ? node_type_name(f.nodes[r].type) : "");
      ExpositionWriter::add_label(scratch, "remote_tier", linked ? tier_in(topology, r) : "");
      l.info_text += scratch;
      end_piece(l.info_text, l.info_end);
    }
  }
  l.first_slot.push_back(slot);
  return out;
}

}  // namespace

std::shared_ptr<const FabricLabels> RenderContext::labels(const Snapshot& s) {
  static const Fabric kNoFabric;
  const Fabric& f = s.fabric ? *s.fabric : kNoFabric;
  const std::uint64_t print = fingerprint(f, s.node_names, s.analysis.topology.get());
  // One entry: the publisher renders the snapshots of one fabric after
  // another; a discovery that changes it replaces the entry once.
  static std::mutex mu;
  static std::weak_ptr<const Fabric> cached_fabric;
  static std::weak_ptr<const Topology> cached_topology;
  static bool cached_has_topology = false;
  static std::shared_ptr<const FabricLabels> cached;
  std::lock_guard lock(mu);
  if (cached && s.fabric && cached->fingerprint == print && cached_fabric.lock() == s.fabric &&
      cached_has_topology == (s.analysis.topology != nullptr) &&
      (!s.analysis.topology || cached_topology.lock() == s.analysis.topology)) {
    return cached;
  }
  auto built = build_labels(f, s.node_names, s.analysis.topology.get(), print);
  if (s.fabric) {
    cached = built;
    cached_fabric = s.fabric;
    cached_topology = s.analysis.topology;
    cached_has_topology = s.analysis.topology != nullptr;
  }
  return built;
}

RenderContext::RenderContext(const Snapshot& snapshot) : s_(snapshot), fabric_(s_.fabric.get()) {
  static const Fabric kNoFabric;
  if (fabric_ == nullptr) fabric_ = &kNoFabric;
  labels_ = labels(s_);
  slot_.resize(s_.ports.size());
  for (std::size_t i = 0; i < s_.ports.size(); ++i) {
    slot_[i] = labels_->first_slot[s_.ports[i].node] + s_.ports[i].port_index;
  }
  if (!s_.analysis.result.ports.empty()) {
    view_.assign(labels_->first_slot.back(), -1);
    for (std::size_t i = 0; i < s_.ports.size(); ++i) {
      view_[slot_[i]] = static_cast<std::int32_t>(i);
    }
  }
}

std::vector<std::string_view> RenderContext::port_ids() const {
  std::vector<std::string_view> ids(s_.ports.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = port_id(i);
  return ids;
}

std::string RenderContext::node_named(std::size_t n) const {
  std::string l(node_id(n));
  ExpositionWriter::add_label(l, "node_name", s_.node_names[n]);
  ExpositionWriter::add_label(l, "node_type", node_type_name(fabric_->nodes[n].type));
  return l;
}

std::string RenderContext::port_named(std::size_t i) const {
  const PortView& p = s_.ports[i];
  std::string l = node_named(p.node);
  ExpositionWriter::add_label(l, "port",
                              std::to_string(fabric_->nodes[p.node].ports[p.port_index].number));
  ExpositionWriter::add_label(l, "tier", tier_of(p.node));
  ExpositionWriter::add_label(l, "rail", rail_of(p.node));
  return l;
}

std::string_view RenderContext::tier_of(std::size_t n) const {
  return tier_in(s_.analysis.topology.get(), n);
}

std::string RenderContext::rail_of(std::size_t n) const {
  const Topology* t = s_.analysis.topology.get();
  if (t == nullptr || n >= t->rail.size() || t->rail[n] == kNoRail) return "";
  return std::to_string(t->rail[n]);
}

bool RenderContext::port_exported(std::size_t i) const {
  const ExportConfig& ex = s_.exporting;
  return ex.port_counters &&
         (ex.hca_port_counters || fabric_->nodes[s_.ports[i].node].type != NodeType::kHca);
}

std::int64_t RenderContext::view_of(std::int32_t node, std::uint32_t port_index) const {
  if (view_.empty() || node < 0 ||
      static_cast<std::size_t>(node) + 1 >= labels_->first_slot.size()) {
    return -1;
  }
  const std::uint32_t first = labels_->first_slot[static_cast<std::size_t>(node)];
  if (first + port_index >= labels_->first_slot[static_cast<std::size_t>(node) + 1]) return -1;
  return view_[first + port_index];
}

}  // namespace ibfx
