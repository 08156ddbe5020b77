// A re-route as an event: what changed between two route models built on
// the tables before and after the subnet manager rewrote them (a cable
// down, a switch lost, a new routing engine). Listed on /events as kind
// "route" (docs/routes.md).
#pragma once

#include <cstdint>
#include <vector>

#include "routing/route_model.h"

namespace ibfx {

struct PortRouteDelta {
  std::uint64_t node_guid = 0;
  std::uint8_t port = 0;
  std::uint32_t before = 0;  // destinations routed out of the port
  std::uint32_t after = 0;
  bool link_up = true;  // in the fabric of the new model
};

inline constexpr std::size_t kRouteDeltaPorts = 10;

struct RouteChange {
  std::uint64_t id = 0;
  double at = 0;  // Unix seconds of the sweep that saw it
  // Destination LIDs whose out port changed at one switch or more.
  std::uint64_t destinations_moved = 0;
  // (switch, destination LID) entries changed, over every switch.
  std::uint64_t entries_changed = 0;
  std::uint64_t switches_changed = 0;
  // The ports that lost and gained the most destinations (at most
  // kRouteDeltaPorts each, largest change first). A port that lost every
  // destination and whose link is down in the new fabric is what the SM
  // routed around: the likely cause.
  std::vector<PortRouteDelta> lost;
  std::vector<PortRouteDelta> gained;
  bool empty() const { return entries_changed == 0; }
};

// The change from `before` to `after`, over the switches whose tables are
// complete in both (a switch read for the first time is no re-route).
RouteChange diff_routes(const RouteModel& before, const RouteModel& after);

}  // namespace ibfx
