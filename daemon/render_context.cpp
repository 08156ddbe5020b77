#include "daemon/render_context.h"

#include "daemon/exposition.h"
#include "daemon/snapshot.h"

namespace ibfx {

RenderContext::RenderContext(const Snapshot& snapshot) : s_(snapshot), fabric_(s_.fabric.get()) {
  static const Fabric kNoFabric;
  if (fabric_ == nullptr) fabric_ = &kNoFabric;
  const Fabric& f = *fabric_;
  node_ids_.resize(f.nodes.size());
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    ExpositionWriter::add_label(node_ids_[n], "node_guid", guid_hex(f.nodes[n].guid));
  }
  port_ids_.resize(s_.ports.size());
  for (std::size_t i = 0; i < s_.ports.size(); ++i) {
    const PortView& p = s_.ports[i];
    port_ids_[i] = node_ids_[p.node];
    ExpositionWriter::add_label(port_ids_[i], "port",
                                std::to_string(f.nodes[p.node].ports[p.port_index].number));
  }
  if (!s_.analysis.result.ports.empty()) {
    for (std::size_t i = 0; i < s_.ports.size(); ++i) {
      view_[{static_cast<std::int32_t>(s_.ports[i].node), s_.ports[i].port_index}] = i;
    }
  }
}

std::string RenderContext::node_named(std::size_t n) const {
  std::string l = node_ids_[n];
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
  const Topology* t = s_.topology.get();
  return t != nullptr && n < t->tier.size() ? tier_name(t->tier[n]) : "";
}

std::string RenderContext::rail_of(std::size_t n) const {
  const Topology* t = s_.topology.get();
  if (t == nullptr || n >= t->rail.size() || t->rail[n] == kNoRail) return "";
  return std::to_string(t->rail[n]);
}

bool RenderContext::port_exported(std::size_t i) const {
  const ExportConfig& ex = s_.exporting;
  return ex.port_counters &&
         (ex.hca_port_counters || fabric_->nodes[s_.ports[i].node].type != NodeType::kHca);
}

std::int64_t RenderContext::view_of(std::int32_t node, std::uint32_t port_index) const {
  auto it = view_.find({node, port_index});
  return it == view_.end() ? -1 : static_cast<std::int64_t>(it->second);
}

}  // namespace ibfx
