// Routing balance: per switch, how evenly its forwarding table spreads the
// destinations over its up ports (docs/scores.md, "Routing or traffic").
// A fat tree's routing engines (opensm's ftree, updn, minhop) give each up
// port of a leaf about the same number of destinations; a table that puts
// far more on one up port (a re-route after a lost cable left in place, a
// skewed routing file) makes that port hot whatever the traffic.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/route_evidence.h"
#include "analysis/topology.h"
#include "routing/route_model.h"

namespace ibfx {

struct SwitchRouteBalance {
  std::int32_t node = kNoNode;
  std::size_t up_ports = 0;  // up ports with an active link
  std::uint32_t max_routes = 0;
  double mean_routes = 0;
  double ratio = 0;           // max / mean over the up ports (1: even)
  std::uint8_t max_port = 0;  // port number with the most destinations
};

// Every switch with a complete table and two or more active up ports that
// carry any destination, by node index.
std::vector<SwitchRouteBalance> route_balance(const RouteModel& model, const Topology& topology);

// The destinations per switch port, for the analysis's cause of a
// saturated up port (analysis/route_evidence.h).
RouteEvidence route_evidence(const RouteModel& model);

}  // namespace ibfx
