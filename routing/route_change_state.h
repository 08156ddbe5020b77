// The re-route events' state file (route_events.json, next to events.json
// and link_events.json; docs/routes.md): the re-routes RouteTracker keeps
// (at most kRouteEventsKept: RouteTracker::restore keeps the newest), its counter and next id, so
// that /events and infiniband_route_changes_total carry on across a restart as the other events do.
// Versioned: a file of another version is refused as a whole.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "routing/route_changes.h"

namespace ibfx {

struct RouteChangeState {
  std::vector<RouteChange> changes;  // oldest first
  std::uint64_t changes_total = 0;
  std::uint64_t next_id = 1;
};

// Version 1: {"format": "ibfabric_exporter route events", "version": 1,
// "saved_at", "next_id", "changes_total", "changes": [{"id", "at",
// "destinations_moved", "entries_changed", "switches_changed", "lost":
// [port...], "gained": [port...]}]}, a port {"node_guid", "port",
// "before", "after", "link_up"}.
inline constexpr int kRouteChangeStateVersion = 1;
inline constexpr std::string_view kRouteChangeStateFormat = "ibfabric_exporter route events";

std::string encode_route_change_state(const RouteChangeState& state, double saved_at);
// False with `error` for anything but a complete, valid state of
// kRouteChangeStateVersion: `state` is then left empty. Never throws.
bool decode_route_change_state(std::string_view text, RouteChangeState& state, std::string& error);

}  // namespace ibfx
