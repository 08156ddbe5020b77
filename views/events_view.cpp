#include "views/events_view.h"

#include <nlohmann/json.hpp>

#include "analysis/congestion.h"
#include "analysis/link_condition.h"
#include "base/utc_time.h"
#include "fabric/fabric.h"

namespace ibfx {
namespace {

using nlohmann::json;

// The fields below are /events' own (docs/http.md): the state files keep
// the same events in a form of their own (analysis/congestion_event_state.h,
// links/link_event_state.h), versioned for the daemon that reads them back,
// so that neither contract moves when the other does.

json node_json(const EventNode& n) {
  return json{{"node_guid", guid_hex(n.guid)}, {"node_name", n.name}};
}

json congestion_event_json(const CongestionEvent& e) {
  json j;
  j["kind"] = "congestion";
  j["id"] = e.id;
  j["state"] = e.active() ? "active" : "ended";
  j["root"] = node_json(e.root);
  j["root"]["port"] = e.root_port;
  j["root"]["remote_node_guid"] = guid_hex(e.far.guid);
  j["root"]["remote_node_name"] = e.far.name;
  j["root"]["remote_port"] = e.far_port;
  j["cause"] = std::string(cause_name(e.cause));
  j["start"] = e.start;
  if (e.end) j["end"] = *e.end;  // absent while active
  j["last_seen"] = e.last_seen;
  j["duration_seconds"] = e.duration();
  j["peak_score"] = e.peak_score;
  j["peak_at"] = e.peak_at;
  j["peak_victims"] = e.peak_victims;
  j["sweeps"] = e.sweeps;
  j["congested_seconds"] = e.congested_seconds;
  j["rails"] = e.rails;
  json leaves = json::array();
  for (const EventNode& l : e.leaves) leaves.push_back(node_json(l));
  j["leaves"] = std::move(leaves);
  j["leaves_truncated"] = e.leaves_truncated;
  j["jobs"] = e.jobs;
  j["jobs_truncated"] = e.jobs_truncated;
  return j;
}

json link_event_json(const LinkEvent& e) {
  json j;
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
  j["peak_ber"] = e.peak_ber >= 0 ? json(e.peak_ber) : json();  // null: no symbol error
  j["downs"] = e.downs;
  return j;
}

}  // namespace

std::optional<double> parse_events_since(std::string_view text, std::string& error) {
  return parse_unix_seconds("since", text, error);
}

std::string render_events_json(const EventList& events_in, std::optional<double> sweep_timestamp,
                               std::optional<double> since, const LinkEventList& link_events) {
  json out;
  out["sweep_timestamp"] = sweep_timestamp ? json(*sweep_timestamp) : json();
  if (since) out["since"] = *since;
  json events = json::array();
  std::size_t active = 0;
  for (const CongestionEvent& e : events_in) {
    if (e.active()) ++active;
    if (since && !e.active() && *e.end < *since) continue;
    events.push_back(congestion_event_json(e));
  }
  // Link events after the congestion events, each list newest start first.
  for (const LinkEvent& e : link_events) {
    if (e.active()) ++active;
    if (since && !e.active() && *e.end < *since) continue;
    events.push_back(link_event_json(e));
  }
  out["active"] = active;
  out["events"] = std::move(events);
  // Names are untrusted bytes: invalid UTF-8 becomes U+FFFD rather than an
  // exception (as /status.json does).
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace ibfx
