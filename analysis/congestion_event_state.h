// The congestion events' state file (docs/operations.md, "State
// directory"): the tracker's whole state as JSON, written and read back by
// the daemon. The file is versioned: a file of another version is refused
// as a whole, never half read. /events shows the events in a form of its
// own (api/events_view.h), so that the API and the file change apart.
#pragma once

#include <string>
#include <string_view>

#include "analysis/congestion_events.h"

namespace ibfx {

// Version 1: {"format": "ibfabric_exporter congestion events", "version": 1,
// "saved_at", "next_id", "counters": {cause: {"events", "seconds"}},
// "events": [event...]}.
inline constexpr int kEventStateVersion = 1;
inline constexpr std::string_view kEventStateFormat = "ibfabric_exporter congestion events";

// An event in "events": id, state ("active"/"ended"), root {node_guid,
// node_name, port, remote_node_guid, remote_node_name, remote_port}, cause,
// start, end (only once ended), last_seen, duration_seconds, peak_score,
// peak_at, peak_victims, sweeps, congested_seconds, rails, leaves
// [{node_guid, node_name}], leaves_truncated, jobs, jobs_truncated, and
// what the tracker needs to go on with it (absent_sweeps). Times in Unix
// seconds.
std::string encode_event_state(const EventTrackerState& state, double saved_at);
// False with `error` ("not JSON: ...", "version 7, this daemon reads 1",
// "events[3].root.port: ...") for anything but a complete, valid state of
// kEventStateVersion: `state` is then left empty. Never throws.
bool decode_event_state(std::string_view text, EventTrackerState& state, std::string& error);

}  // namespace ibfx
