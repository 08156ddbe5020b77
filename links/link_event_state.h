// The link events' state file (issue #34): the tracker's whole state as
// JSON, as the state directory keeps it across a restart
// (link_events.json, next to the congestion events' events.json;
// docs/links.md). The file is versioned: a file of another version is
// refused as a whole, never half read. /events shows the events in a form
// of its own (api/events_view.h).
#pragma once

#include <string>
#include <string_view>

#include "links/link_events.h"

namespace ibfx {

// Version 1: {"format": "ibfabric_exporter link events", "version": 1,
// "saved_at", "next_id", "events": [event...]}.
inline constexpr int kLinkEventStateVersion = 1;
inline constexpr std::string_view kLinkEventStateFormat = "ibfabric_exporter link events";

// An event in "events": kind ("link"), id, state ("active"/"ended"),
// condition, node_guid, node_name, port, remote_node_guid,
// remote_node_name, remote_port, start, end (only once ended), last_seen,
// duration_seconds, peak_ber (null: no symbol error), downs. Times in Unix
// seconds.
std::string encode_link_event_state(const LinkEventTrackerState& state, double saved_at);
// False with `error` ("not JSON: ...", "version 7, this daemon reads 1",
// "events[3].port: ...") for anything but a complete, valid state of
// kLinkEventStateVersion: `state` is then left empty. Never throws.
bool decode_link_event_state(std::string_view text, LinkEventTrackerState& state,
                             std::string& error);

}  // namespace ibfx
