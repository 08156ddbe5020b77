#include "routing/route_balance.h"

#include <algorithm>

namespace ibfx {

std::vector<SwitchRouteBalance> route_balance(const RouteModel& model, const Topology& topology) {
  std::vector<SwitchRouteBalance> out;
  const Fabric& f = model.fabric();
  const std::size_t nodes = std::min(f.nodes.size(), topology.direction.size());
  for (std::size_t n = 0; n < nodes; ++n) {
    const auto node = static_cast<std::int32_t>(n);
    if (f.nodes[n].type != NodeType::kSwitch || !model.routed(node)) continue;
    const std::vector<PortRoutes>& routes = model.port_routes(node);
    const FabricNode& fn = f.nodes[n];
    SwitchRouteBalance b;
    b.node = node;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < fn.ports.size() && i < routes.size(); ++i) {
      if (i >= topology.direction[n].size() || topology.direction[n][i] != PortDirection::kUp) {
        continue;
      }
      if (!fn.ports[i].linked() || !fn.ports[i].up()) continue;
      ++b.up_ports;
      sum += routes[i].destinations;
      if (routes[i].destinations > b.max_routes || b.max_port == 0) {
        b.max_routes = routes[i].destinations;
        b.max_port = fn.ports[i].number;
      }
    }
    if (b.up_ports < 2 || sum == 0) continue;
    b.mean_routes = static_cast<double>(sum) / static_cast<double>(b.up_ports);
    b.ratio = static_cast<double>(b.max_routes) / b.mean_routes;
    out.push_back(b);
  }
  return out;
}

RouteEvidence route_evidence(const RouteModel& model) {
  RouteEvidence e;
  const Fabric& f = model.fabric();
  e.destinations.resize(f.nodes.size());
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const auto node = static_cast<std::int32_t>(n);
    if (!model.routed(node)) continue;
    const std::vector<PortRoutes>& routes = model.port_routes(node);
    e.destinations[n].reserve(routes.size());
    for (const PortRoutes& r : routes) e.destinations[n].push_back(r.destinations);
  }
  return e;
}

}  // namespace ibfx
