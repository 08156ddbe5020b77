// The congestion events as JSON: one event as /events shows it, and the
// tracker's whole state as the state file keeps it (docs/operations.md,
// "State directory"). The file is versioned: a file of another version is
// refused as a whole, never half read.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "analysis/congestion_events.h"

namespace ibfx {

// Version 1: {"format": "ibfabric_exporter congestion events", "version": 1,
// "saved_at", "next_id", "counters": {cause: {"events", "seconds"}},
// "events": [event...]}.
inline constexpr int kEventStateVersion = 1;
inline constexpr std::string_view kEventStateFormat = "ibfabric_exporter congestion events";

// One event: id, state ("active"/"ended"), root {node_guid, node_name,
// port, remote_node_guid, remote_node_name, remote_port}, cause, start,
// end (only once ended), last_seen, duration_seconds, peak_score, peak_at,
// peak_victims, sweeps, congested_seconds, rails, leaves [{node_guid,
// node_name}], leaves_truncated. Times in Unix seconds. `with_tracking`
// adds what only the tracker needs (absent_sweeps).
nlohmann::json event_json(const CongestionEvent& event, bool with_tracking = false);

// JSON text of `value` with invalid UTF-8 (node descriptions are untrusted
// bytes) replaced by U+FFFD instead of throwing.
std::string dump_json(const nlohmann::json& value);

std::string encode_event_state(const EventTrackerState& state, double saved_at);
// False with `error` ("not JSON: ...", "version 7, this daemon reads 1",
// "events[3].root.port: ...") for anything but a complete, valid state of
// kEventStateVersion: `state` is then left empty. Never throws.
bool decode_event_state(std::string_view text, EventTrackerState& state, std::string& error);

}  // namespace ibfx
