#include "routing/route_changes.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace ibfx {
namespace {

// (node GUID, port number) -> destinations routed out of it, for the
// switches with a complete table.
std::map<std::pair<std::uint64_t, std::uint8_t>, std::uint32_t> port_counts(
    const RouteModel& model) {
  std::map<std::pair<std::uint64_t, std::uint8_t>, std::uint32_t> counts;
  const Fabric& f = model.fabric();
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const auto node = static_cast<std::int32_t>(n);
    if (!model.routed(node)) continue;
    const auto& routes = model.port_routes(node);
    for (std::size_t i = 0; i < routes.size() && i < f.nodes[n].ports.size(); ++i) {
      counts[{f.nodes[n].guid, f.nodes[n].ports[i].number}] = routes[i].destinations;
    }
  }
  return counts;
}

}  // namespace

RouteChange diff_routes(const RouteModel& before, const RouteModel& after) {
  RouteChange c;
  std::vector<std::uint8_t> moved(std::size_t{0xFFFF} + 1, 0);
  for (const SwitchRoutes& now : after.tables().switches) {
    const SwitchRoutes* was = before.tables().find(now.guid);
    if (was == nullptr || !was->complete || !now.complete) continue;
    const std::size_t lids = std::max(was->out_port.size(), now.out_port.size());
    std::uint64_t changed = 0;
    for (std::size_t lid = 1; lid < lids; ++lid) {
      const auto l = static_cast<std::uint16_t>(lid);
      if (was->port_for(l) == now.port_for(l)) continue;
      ++changed;
      moved[lid] = 1;
    }
    c.entries_changed += changed;
    c.switches_changed += changed > 0 ? 1 : 0;
  }
  for (const std::uint8_t m : moved) c.destinations_moved += m;
  if (c.empty()) return c;

  const auto old_counts = port_counts(before);
  const auto new_counts = port_counts(after);
  const Fabric& f = after.fabric();
  auto link_up = [&f](std::uint64_t guid, std::uint8_t port) {
    const FabricNode* node = f.find(guid);
    if (node == nullptr) return false;
    for (const FabricPort& p : node->ports) {
      if (p.number == port) return p.linked() && p.up();
    }
    return false;
  };
  for (const auto& [key, was] : old_counts) {
    auto it = new_counts.find(key);
    // A switch that left the fabric or has no table now: not a change of
    // its routes but of what is known.
    if (it == new_counts.end()) continue;
    const std::uint32_t now = it->second;
    if (now == was) continue;
    PortRouteDelta d{key.first, key.second, was, now, link_up(key.first, key.second)};
    (now < was ? c.lost : c.gained).push_back(d);
  }
  auto by_change = [](const PortRouteDelta& a, const PortRouteDelta& b) {
    const auto da = a.before > a.after ? a.before - a.after : a.after - a.before;
    const auto db = b.before > b.after ? b.before - b.after : b.after - b.before;
    return std::tuple(-static_cast<std::int64_t>(da), a.node_guid, a.port) <
           std::tuple(-static_cast<std::int64_t>(db), b.node_guid, b.port);
  };
  for (auto* list : {&c.lost, &c.gained}) {
    std::sort(list->begin(), list->end(), by_change);
    if (list->size() > kRouteDeltaPorts) list->resize(kRouteDeltaPorts);
  }
  return c;
}

}  // namespace ibfx
