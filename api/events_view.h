// GET /events: the congestion events of one snapshot as JSON, newest start
// first (docs/http.md, "/events"). From the snapshot only, like /top: the
// events are the tracker's bounded history (analysis/congestion_events.h),
// so the body is bounded too.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analysis/congestion_events.h"
#include "links/link_events.h"
#include "routing/route_changes.h"

namespace ibfx {

// `since=` as Unix seconds: a finite, non-negative decimal number. nullopt
// (with `error` set) for anything else.
std::optional<double> parse_events_since(std::string_view text, std::string& error);

// {"sweep_timestamp": ..., "since": ..., "active": N, "events": [...]}:
// with `since`, only the events congested at or after it (active ones, and
// ended ones whose end is not before it). `sweep_timestamp` is that of the
// snapshot the events are from; null before the first sweep after a start
// (the events restored from the state directory).
// Every event has a `kind`: "congestion", "link" (issue #34: a cable's
// condition, with both ends, its peak BER and downs; `link_events`), or
// "route" (issue #41: the subnet manager re-routed; `route_changes`, which
// name their ports by GUID: `fabric` and `node_names` name them, when
// given). A re-route is an instant: its start is its end, never active.
std::string render_events_json(const EventList& events, std::optional<double> sweep_timestamp,
                               std::optional<double> since, const LinkEventList& link_events = {},
                               const std::vector<RouteChange>& route_changes = {},
                               const Fabric* fabric = nullptr,
                               const std::vector<std::string>* node_names = nullptr);

}  // namespace ibfx
