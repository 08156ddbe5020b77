#include "api/events_view.h"

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
  // Who sent into the root at its peak (issue #41; empty: routes not known).
  json senders = json::array();
  for (const EventSender& s : e.senders) {
    json one = node_json(s.node);
    one["port"] = s.port;
    one["bytes_per_second"] = s.bytes_per_second;
    one["jobs"] = s.jobs;
    senders.push_back(std::move(one));
  }
  j["senders"] = std::move(senders);
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

json route_port_json(const PortRouteDelta& d, const Fabric* fabric,
                     const std::vector<std::string>* names) {
  std::string name;
  if (fabric != nullptr && names != nullptr) {
    if (auto it = fabric->by_guid.find(d.node_guid);
        it != fabric->by_guid.end() && static_cast<std::size_t>(it->second) < names->size()) {
      name = (*names)[static_cast<std::size_t>(it->second)];
    }
  }
  return json{
      {"node_guid", guid_hex(d.node_guid)}, {"node_name", name},       {"port", d.port},
      {"routes_before", d.before},          {"routes_after", d.after}, {"link_up", d.link_up}};
}

json route_event_json(const RouteChange& c, const Fabric* fabric,
                      const std::vector<std::string>* names) {
  json j;
  j["kind"] = "route";
  j["id"] = c.id;
  j["state"] = "ended";
  j["start"] = c.at;
  j["end"] = c.at;
  j["last_seen"] = c.at;
  j["duration_seconds"] = 0.0;
  j["destinations_moved"] = c.destinations_moved;
  j["entries_changed"] = c.entries_changed;
  j["switches_changed"] = c.switches_changed;
  json lost = json::array();
  json cause = json::array();
  for (const PortRouteDelta& d : c.lost) {
    lost.push_back(route_port_json(d, fabric, names));
    // What the SM routed around: a port that lost every destination and
    // whose link is down now.
    if (d.after == 0 && !d.link_up) cause.push_back(route_port_json(d, fabric, names));
  }
  json gained = json::array();
  for (const PortRouteDelta& d : c.gained) gained.push_back(route_port_json(d, fabric, names));
  j["ports_lost_routes"] = std::move(lost);
  j["ports_gained_routes"] = std::move(gained);
  j["links_down"] = std::move(cause);
  return j;
}

}  // namespace

std::optional<double> parse_events_since(std::string_view text, std::string& error) {
  return parse_unix_seconds("since", text, error);
}

std::string render_events_json(const EventList& events_in, std::optional<double> sweep_timestamp,
                               std::optional<double> since, const LinkEventList& link_events,
                               const std::vector<RouteChange>& route_changes, const Fabric* fabric,
                               const std::vector<std::string>* node_names) {
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
  // Re-routes last, newest first.
  for (auto it = route_changes.rbegin(); it != route_changes.rend(); ++it) {
    if (since && it->at < *since) continue;
    events.push_back(route_event_json(*it, fabric, node_names));
  }
  out["active"] = active;
  out["events"] = std::move(events);
  // Names are untrusted bytes: invalid UTF-8 becomes U+FFFD rather than an
  // exception (as /status.json does).
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace ibfx
