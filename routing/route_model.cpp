#include "routing/route_model.h"

#include <algorithm>
#include <chrono>

namespace ibfx {
namespace {

// A route longer than this many switches is a loop: a fat tree of any size
// has fewer than 8 switch hops between two HCAs, and IBA's hop count for a
// directed route (64) bounds any sane fabric.
constexpr std::size_t kMaxHops = 64;

bool table_usable(const SwitchRoutes* t) { return t != nullptr && t->complete; }

}  // namespace

std::string_view trace_error_name(TraceError error) {
  switch (error) {
    case TraceError::kNone:
      return "";
    case TraceError::kNoSourceLink:
      return "no_source_link";
    case TraceError::kUnknownLid:
      return "unknown_lid";
    case TraceError::kNoTable:
      return "no_table";
    case TraceError::kStaleTable:
      return "stale_table";
    case TraceError::kDeadEnd:
      return "no_route";
    case TraceError::kLinkDown:
      return "link_down";
    case TraceError::kLoop:
      return "loop";
    case TraceError::kWrongDestination:
      return "wrong_destination";
  }
  return "";
}

std::shared_ptr<const RouteModel> RouteModel::build(std::shared_ptr<const Fabric> fabric,
                                                    std::shared_ptr<const RouteTables> tables) {
  const auto started = std::chrono::steady_clock::now();
  std::shared_ptr<RouteModel> m(new RouteModel());
  m->fabric_ = std::move(fabric);
  m->tables_ = tables ? std::move(tables) : std::make_shared<const RouteTables>();
  m->index_lids();
  m->index_links();
  m->count_routes();
  m->stats_.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return m;
}

void RouteModel::index_lids() {
  const Fabric& f = *fabric_;
  owners_.assign(std::size_t{0xFFFF} + 1, LidOwner{});
  table_of_.assign(f.nodes.size(), -1);
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const FabricNode& node = f.nodes[n];
    const auto ni = static_cast<std::int32_t>(n);
    if (node.type == NodeType::kSwitch) {
      ++stats_.switches;
      // A switch answers at its port 0's LID (base switch port 0: LMC 0).
      if (node.lid != 0) owners_[node.lid] = {ni, 0};
      if (const SwitchRoutes* t = tables_->find(node.guid)) {
        table_of_[n] = static_cast<std::int32_t>(t - tables_->switches.data());
        if (t->complete) ++stats_.switches_routed;
        if (t->stale) ++stats_.switches_stale;
      }
      continue;
    }
    if (node.type != NodeType::kHca) continue;
    for (const FabricPort& p : node.ports) {
      if (p.lid == 0) continue;
      // PortInfo:LMC (IBA 14.2.5.6): the port answers at 2^LMC LIDs from
      // its base LID; the SM may route each of them another way.
      const unsigned count = 1U << std::min<unsigned>(p.lmc, 7);
      for (unsigned k = 0; k < count && p.lid + k <= 0xFFFF; ++k) {
        const auto lid = static_cast<std::uint16_t>(p.lid + k);
        owners_[lid] = {ni, p.number};
        destination_lids_.push_back(lid);
      }
      endpoints_.push_back({ni, p.number});
      base_lids_.push_back(p.lid);
    }
  }
  stats_.hca_ports = endpoints_.size();
  stats_.destination_lids = destination_lids_.size();
}

void RouteModel::index_links() {
  const Fabric& f = *fabric_;
  links_.assign(f.nodes.size(), {});
  routes_.assign(f.nodes.size(), {});
  attached_.assign(f.nodes.size(), 0);
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const FabricNode& node = f.nodes[n];
    std::uint8_t highest = 0;
    for (const FabricPort& p : node.ports) highest = std::max(highest, p.number);
    links_[n].assign(std::size_t{highest} + 1, Link{});
    for (const FabricPort& p : node.ports) {
      links_[n][p.number] = {p.remote_node, p.remote_port, p.linked() && p.up()};
    }
    if (node.type == NodeType::kSwitch) routes_[n].assign(node.ports.size(), PortRoutes{});
  }
  for (const RouteEndpoint& e : endpoints_) {
    const Link l = link(e.node, e.port);
    if (l.up && l.node != kNoNode &&
        f.nodes[static_cast<std::size_t>(l.node)].type == NodeType::kSwitch) {
      ++attached_[static_cast<std::size_t>(l.node)];
    }
  }
}

RouteModel::Link RouteModel::link(std::int32_t node, std::uint8_t port) const {
  if (node < 0 || static_cast<std::size_t>(node) >= links_.size()) return {};
  const auto& ports = links_[static_cast<std::size_t>(node)];
  return port < ports.size() ? ports[port] : Link{};
}

LidOwner RouteModel::owner(std::uint16_t lid) const { return owners_[lid]; }

const SwitchRoutes* RouteModel::table(std::int32_t node) const {
  if (node < 0 || static_cast<std::size_t>(node) >= table_of_.size()) return nullptr;
  const std::int32_t t = table_of_[static_cast<std::size_t>(node)];
  return t < 0 ? nullptr : &tables_->switches[static_cast<std::size_t>(t)];
}

bool RouteModel::routed(std::int32_t node) const { return table_usable(table(node)); }

const std::vector<PortRoutes>& RouteModel::port_routes(std::int32_t node) const {
  static const std::vector<PortRoutes> kNone;
  if (node < 0 || static_cast<std::size_t>(node) >= routes_.size()) return kNone;
  return routes_[static_cast<std::size_t>(node)];
}

RouteTrace RouteModel::trace(const RouteEndpoint& source, std::uint16_t lid) const {
  RouteTrace t;
  const LidOwner dest = owner(lid);
  if (dest.node == kNoNode) {
    t.error = TraceError::kUnknownLid;
    return t;
  }
  const Link first = link(source.node, source.port);
  if (!first.up || first.node == kNoNode) {
    t.error = TraceError::kNoSourceLink;
    return t;
  }
  const Fabric& f = *fabric_;
  std::int32_t at = first.node;
  std::uint8_t in_port = first.port;
  auto fail = [&t](TraceError e, std::int32_t node) {
    t.error = e;
    t.at_node = node;
    return t;
  };
  for (;;) {
    const FabricNode& node = f.nodes[static_cast<std::size_t>(at)];
    if (node.type != NodeType::kSwitch) {
      // Delivered to an HCA: the LID's owner, or a misroute.
      if (at == dest.node && in_port == dest.port) return t;
      return fail(TraceError::kWrongDestination, at);
    }
    if (at == dest.node) return t;  // the destination is this switch itself
    if (t.hops.size() >= kMaxHops) return fail(TraceError::kLoop, at);
    for (const RouteHop& h : t.hops) {
      if (h.node == at) return fail(TraceError::kLoop, at);
    }
    const SwitchRoutes* table_at = table(at);
    if (!table_usable(table_at)) return fail(TraceError::kNoTable, at);
    if (table_at->stale) return fail(TraceError::kStaleTable, at);
    const std::uint8_t out = table_at->port_for(lid);
    if (out == kNoRoute || out == 0) return fail(TraceError::kDeadEnd, at);
    const Link next = link(at, out);
    if (next.node == kNoNode) return fail(TraceError::kDeadEnd, at);
    if (!next.up) return fail(TraceError::kLinkDown, at);
    t.hops.push_back({at, in_port, out});
    at = next.node;
    in_port = next.port;
  }
}

// count_routes's steps, per destination LID: walk from every switch
// towards it (each switch stepped once, the walks sharing their ends), then
// count the destinations each switch port carries and, at a port's base
// LID, the source-destination pairs.
class RouteModel::RouteCounter {
 public:
  explicit RouteCounter(RouteModel& m) : m_(m), f_(*m.fabric_) {
    compact_switches();
    read_tables();
    const std::size_t s_count = switches_.size();
    reach_.resize(s_count);
    next_.resize(s_count);
    out_.resize(s_count);
    depth_.resize(s_count);
    carried_.resize(s_count);
    mark_base_lids();
  }

  void count() {
    for (const std::uint16_t lid : m_.destination_lids_) {
      walk_all(lid);
      count_destinations();
      if (!is_base_[lid]) continue;
      count_pairs();
    }
  }

 private:
  // Compact switch indices: the per-destination arrays are per switch, and
  // there are ~10x fewer switches than nodes in a fat tree.
  void compact_switches() {
    compact_.assign(f_.nodes.size(), -1);
    for (std::size_t n = 0; n < f_.nodes.size(); ++n) {
      if (f_.nodes[n].type != NodeType::kSwitch) continue;
      compact_[n] = static_cast<std::int32_t>(switches_.size());
      switches_.push_back(static_cast<std::int32_t>(n));
    }
  }

  // Per switch: its table's out port per LID read straight from the table,
  // and its ports' index by number (PortRoutes are by port index).
  void read_tables() {
    const std::size_t s_count = switches_.size();
    tables_.assign(s_count, nullptr);
    index_of_.resize(s_count);
    for (std::size_t k = 0; k < s_count; ++k) {
      const SwitchRoutes* t = m_.table(switches_[k]);
      tables_[k] = table_usable(t) ? t : nullptr;
      const FabricNode& node = f_.nodes[static_cast<std::size_t>(switches_[k])];
      index_of_[k].assign(m_.links_[static_cast<std::size_t>(switches_[k])].size(), -1);
      for (std::size_t i = 0; i < node.ports.size(); ++i) {
        index_of_[k][node.ports[i].number] = static_cast<std::int16_t>(i);
      }
    }
  }

  // Base LID of each destination LID's port: pairs are counted once per
  // pair of ports, at the base LID; destinations at every LID.
  void mark_base_lids() {
    is_base_.assign(std::size_t{0xFFFF} + 1, 0);
    for (std::uint16_t lid : m_.base_lids_) is_base_[lid] = 1;
  }

  // One step of the walk: where switch k forwards `lid`.
  Reach step(std::size_t k, std::uint16_t lid, const LidOwner& dest) {
    if (tables_[k] == nullptr) return Reach::kUnread;
    const std::uint8_t o = tables_[k]->port_for(lid);
    const Link l = m_.link(switches_[k], o);
    if (o == kNoRoute || o == 0 || l.node == kNoNode || !l.up) return Reach::kBroken;
    out_[k] = o;
    const auto far = static_cast<std::size_t>(l.node);
    if (compact_[far] >= 0) {
      next_[k] = compact_[far];
      return Reach::kUnknown;  // go on
    }
    next_[k] = -1;
    return l.node == dest.node && l.port == dest.port ? Reach::kReaches : Reach::kBroken;
  }

  // The walk from switch s until it ends or meets a switch whose end is
  // known; every switch on the way shares the end.
  void walk_from(std::size_t s, std::uint16_t lid, const LidOwner& dest) {
    stack_.clear();
    auto k = static_cast<std::int32_t>(s);
    Reach end = Reach::kUnknown;
    while (end == Reach::kUnknown) {
      const auto ku = static_cast<std::size_t>(k);
      if (reach_[ku] == Reach::kVisiting) {
        end = Reach::kBroken;  // a loop
        break;
      }
      if (reach_[ku] != Reach::kUnknown) {
        end = reach_[ku];
        break;
      }
      reach_[ku] = Reach::kVisiting;
      stack_.push_back(k);
      const Reach r = step(ku, lid, dest);
      if (r != Reach::kUnknown) {
        end = r;
        if (r == Reach::kReaches) depth_[ku] = 0;
        reach_[ku] = r;
        stack_.pop_back();
        break;
      }
      k = next_[ku];
    }
    // Unwind: everything on the stack shares the end; depth from the end.
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      const auto ku = static_cast<std::size_t>(*it);
      reach_[ku] = end;
      if (end == Reach::kReaches) {
        depth_[ku] = static_cast<std::uint16_t>(depth_[static_cast<std::size_t>(next_[ku])] + 1);
      }
    }
  }

  void walk_all(std::uint16_t lid) {
    const LidOwner dest = m_.owners_[lid];
    std::fill(reach_.begin(), reach_.end(), Reach::kUnknown);
    for (std::size_t s = 0; s < switches_.size(); ++s) {
      if (reach_[s] != Reach::kUnknown) continue;
      walk_from(s, lid, dest);
    }
  }

  // Destinations per port, and the switches that reach, by depth.
  void count_destinations() {
    for (auto& level : by_depth_) level.clear();
    for (std::size_t k = 0; k < switches_.size(); ++k) {
      if (reach_[k] == Reach::kBroken) ++m_.stats_.broken_routes;
      if (reach_[k] != Reach::kReaches) continue;
      const auto idx = index_of_[k][out_[k]];
      m_.routes_[static_cast<std::size_t>(switches_[k])][static_cast<std::size_t>(idx)]
          .destinations++;
      if (by_depth_.size() <= depth_[k]) by_depth_.resize(std::size_t{depth_[k]} + 1);
      by_depth_[depth_[k]].push_back(static_cast<std::int32_t>(k));
    }
  }

  // Pairs: every source HCA port attached to a switch whose walk reaches
  // the destination crosses each port on the rest of that walk. Summed
  // from the leaves of the tree inwards (deepest first).
  void count_pairs() {
    for (std::size_t d = by_depth_.size(); d-- > 0;) {
      for (const std::int32_t k : by_depth_[d]) {
        const auto ku = static_cast<std::size_t>(k);
        std::uint64_t c = m_.attached_[static_cast<std::size_t>(switches_[ku])];
        // The destination does not send to itself.
        if (next_[ku] == -1 && c > 0) --c;
        c += carried_[ku];
        carried_[ku] = 0;
        const auto idx = static_cast<std::size_t>(index_of_[ku][out_[ku]]);
        m_.routes_[static_cast<std::size_t>(switches_[ku])][idx].pairs += c;
        if (next_[ku] >= 0) carried_[static_cast<std::size_t>(next_[ku])] += c;
      }
    }
  }

  RouteModel& m_;
  const Fabric& f_;
  std::vector<std::int32_t> switches_;  // compact index -> node
  std::vector<std::int32_t> compact_;   // node -> compact index, -1
  std::vector<const SwitchRoutes*> tables_;
  std::vector<std::vector<std::int16_t>> index_of_;
  std::vector<std::uint8_t> is_base_;  // by LID
  // Per destination, by compact index:
  std::vector<Reach> reach_;
  std::vector<std::int32_t> next_;  // compact index of the next switch; -1: delivers
  std::vector<std::uint8_t> out_;
  std::vector<std::uint16_t> depth_;
  std::vector<std::uint64_t> carried_;
  std::vector<std::int32_t> stack_;
  std::vector<std::vector<std::int32_t>> by_depth_;
};

void RouteModel::count_routes() { RouteCounter(*this).count(); }

std::vector<RouteEndpoint> RouteModel::sources_through(std::int32_t node, std::uint8_t port) const {
  const Fabric& f = *fabric_;
  if (node < 0 || static_cast<std::size_t>(node) >= f.nodes.size()) return {};
  if (f.nodes[static_cast<std::size_t>(node)].type != NodeType::kSwitch) {
    return {{node, port}};
  }
  const SwitchRoutes* root_table = table(node);
  if (!table_usable(root_table)) return {};
  // Memo per destination: does the walk from switch n reach `node`?
  std::vector<Reach> reach(f.nodes.size());
  std::vector<std::uint8_t> chosen(endpoints_.size(), 0);
  std::vector<std::int32_t> stack;
  for (const std::uint16_t lid : destination_lids_) {
    if (root_table->port_for(lid) != port) continue;
    std::fill(reach.begin(), reach.end(), Reach::kUnknown);
    reach[static_cast<std::size_t>(node)] = Reach::kReaches;
    for (std::size_t e = 0; e < endpoints_.size(); ++e) {
      if (chosen[e]) continue;
      const Link first = link(endpoints_[e].node, endpoints_[e].port);
      if (!first.up || first.node == kNoNode) continue;
      std::int32_t k = first.node;
      stack.clear();
      Reach end = Reach::kBroken;
      for (std::size_t hops = 0; hops <= kMaxHops; ++hops) {
        const auto ku = static_cast<std::size_t>(k);
        if (reach[ku] == Reach::kReaches || reach[ku] == Reach::kBroken) {
          end = reach[ku];
          break;
        }
        if (reach[ku] == Reach::kVisiting ||
            f.nodes[ku].type != NodeType::kSwitch) {  // a loop, or delivered elsewhere
          break;
        }
        reach[ku] = Reach::kVisiting;
        stack.push_back(k);
        const SwitchRoutes* t = table(k);
        if (!table_usable(t)) break;
        const Link l = link(k, t->port_for(lid));
        if (l.node == kNoNode || !l.up) break;
        k = l.node;
      }
      for (const std::int32_t s : stack) reach[static_cast<std::size_t>(s)] = end;
      if (end == Reach::kReaches && owners_[lid].node != endpoints_[e].node) chosen[e] = 1;
    }
  }
  std::vector<RouteEndpoint> sources;
  for (std::size_t e = 0; e < endpoints_.size(); ++e) {
    if (chosen[e]) sources.push_back(endpoints_[e]);
  }
  return sources;
}

std::size_t RouteModel::memory_bytes() const {
  std::size_t bytes =
      owners_.capacity() * sizeof(LidOwner) + table_of_.capacity() * sizeof(std::int32_t) +
      attached_.capacity() * sizeof(std::uint32_t) + endpoints_.capacity() * sizeof(RouteEndpoint) +
      base_lids_.capacity() * sizeof(std::uint16_t) +
      destination_lids_.capacity() * sizeof(std::uint16_t);
  for (const auto& l : links_) bytes += l.capacity() * sizeof(Link) + sizeof(std::vector<Link>);
  for (const auto& r : routes_) {
    bytes += r.capacity() * sizeof(PortRoutes) + sizeof(std::vector<PortRoutes>);
  }
  return bytes;
}

}  // namespace ibfx
