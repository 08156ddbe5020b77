// /route?from=NODE[&from_port=N]&to=NODE[&to_port=N][&format=text]: the
// path one pair of ports takes through the fabric, as the switches'
// forwarding tables say (what ibtracert prints), with each switch's egress
// port as it looks now: its stall ratio W and utilization U over the last
// interval. From the published snapshot's route model only (no MAD).
// Never a wrong path: an unknown or ambiguous name, a port without a
// link, a table not read or stale, a loop or a hole is an error that says
// which, and where (docs/routes.md).
#pragma once

#include <string>

namespace ibfx {

struct Snapshot;

struct RouteQuery {
  std::string from, from_port, to, to_port;
  bool text = false;  // format=text
};

struct RouteAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
};

// `now`: Unix seconds, for the tables' age.
RouteAnswer render_route(const Snapshot& snapshot, const RouteQuery& query, double now);

// /routes?node=SWITCH[&format=text]: one switch's table as the route model
// counts it: per port, the destination LIDs routed out of it and the
// (source, destination) HCA port pairs crossing it, with the far end; the
// table's age, whether it is stale, and the switch's routing balance.
RouteAnswer render_switch_routes(const Snapshot& snapshot, const std::string& node, bool text,
                                 double now);

}  // namespace ibfx
