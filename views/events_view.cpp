#include "views/events_view.h"

#include <nlohmann/json.hpp>

#include "analysis/congestion_event_state.h"
#include "base/utc_time.h"

namespace ibfx {

std::optional<double> parse_events_since(std::string_view text, std::string& error) {
  return parse_unix_seconds("since", text, error);
}

namespace {

// A link event (analysis/link_events.h) in /events: the names a congestion
// event gives the same fields, plus both ends of the cable.
nlohmann::json link_event_json(const LinkEvent& e) {
  nlohmann::json j;
  j["kind"] = "link";
  j["id"] = e.id;
  j["state"] = e.active() ? "active" : "ended";
  j["condition"] = link_condition_name(e.condition);
  j["node_guid"] = guid_hex(e.node.guid);
  j["node_name"] = e.node.name;
  j["port"] = e.node_port;
  j["remote_node_guid"] = guid_hex(e.remote.guid);
  j["remote_node_name"] = e.remote.name;
  j["remote_port"] = e.remote_port;
  j["start"] = e.start;
  if (e.end) j["end"] = *e.end;  // as a congestion event: absent while active
  j["last_seen"] = e.last_seen;
  j["duration_seconds"] = e.duration();
  j["peak_ber"] = e.peak_ber >= 0 ? nlohmann::json(e.peak_ber) : nlohmann::json();
  j["downs"] = e.downs;
  return j;
}

}  // namespace

std::string render_events_json(const EventList& events_in, std::optional<double> sweep_timestamp,
                               std::optional<double> since, const LinkEventList& link_events) {
  nlohmann::json out;
  out["sweep_timestamp"] = sweep_timestamp ? nlohmann::json(*sweep_timestamp) : nlohmann::json();
  if (since) out["since"] = *since;
  nlohmann::json events = nlohmann::json::array();
  std::size_t active = 0;
  for (const CongestionEvent& e : events_in) {
    if (e.active()) ++active;
    if (since && !e.active() && *e.end < *since) continue;
    nlohmann::json j = event_json(e);
    j["kind"] = "congestion";
    events.push_back(std::move(j));
  }
  // Link events after the congestion events, each list newest start first.
  for (const LinkEvent& e : link_events) {
    if (e.active()) ++active;
    if (since && !e.active() && *e.end < *since) continue;
    events.push_back(link_event_json(e));
  }
  out["active"] = active;
  out["events"] = std::move(events);
  return dump_json(out) + "\n";
}

}  // namespace ibfx
