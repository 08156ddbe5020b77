#include "views/status_json.h"

#include <nlohmann/json.hpp>

#include "history/history_json.h"

namespace ibfx {
namespace {

using nlohmann::json;

json remote_fields(json j, const StatusFarEnd& r) {
  const bool linked = !(r.name.empty() && r.port == 0);
  j["remote_node_guid"] = linked ? json(guid_hex(r.guid)) : json(nullptr);
  j["remote_node_name"] = linked ? json(r.name) : json(nullptr);
  j["remote_port"] = linked ? json(r.port) : json(nullptr);
  return j;
}

json number_or_null(bool valid, double v) { return valid ? json(v) : json(nullptr); }

/// The fields /history.json and the history's file share with it come
/// from one place (history_json.h); the live page adds what only it has.
json sweep_json(const StatusSweep& s) {
  json sweep = history_sweep_json(s);
  sweep["timestamp_seconds"] = s.timestamp_seconds;
  sweep["stale_nodes"] = s.stale_nodes;
  sweep["routes"] = s.routes_known ? json{{"tables", s.route_tables},
                                          {"stale", s.route_tables_stale},
                                          {"incomplete", s.route_tables_incomplete},
                                          {"oldest_age_seconds", s.route_oldest_age_seconds},
                                          {"full_read_seconds", s.route_full_read_seconds},
                                          {"changes", s.route_changes}}
                                   : json(nullptr);
  sweep["local_node_name"] = s.local_name.empty() ? json(nullptr) : json(s.local_name);
  sweep["local_port_state"] = s.local_name.empty() ? json(nullptr) : json(s.local_port_state);
  return sweep;
}

/// One root with its routes and, when the sender ports are known, who sends
/// into it.
json root_json(const StatusRoot& r) {
  json j = remote_fields(history_root_json(r), r.remote);
  j["held"] = r.held;
  j["link_condition"] = r.link_condition.empty() ? json(nullptr) : json(r.link_condition);
  j["routes"] = r.routes ? json(*r.routes) : json(nullptr);
  j["peer_routes"] = r.routes && r.peer_routes >= 0 ? json(r.peer_routes) : json(nullptr);
  j["sender_ports"] = r.sender_ports ? json(*r.sender_ports) : json(nullptr);
  json senders = json::array();
  for (const StatusSender& sender : r.senders) {
    senders.push_back({{"node_guid", guid_hex(sender.guid)},
                       {"node_name", sender.name},
                       {"port", sender.port},
                       {"bytes_per_second", sender.bytes_per_second},
                       {"jobs", sender.jobs ? json(*sender.jobs) : json(nullptr)}});
  }
  j["senders"] = r.sender_ports ? std::move(senders) : json(nullptr);
  return j;
}

json roots_json(const std::vector<StatusRoot>& roots) {
  json out = json::array();
  for (const StatusRoot& r : roots) out.push_back(root_json(r));
  return out;
}

json switches_json(const std::vector<StatusSwitch>& switches) {
  json out = json::array();
  for (const StatusSwitch& sw : switches) {
    out.push_back(
        {{"node_guid", guid_hex(sw.guid)},
         {"node_name", sw.name},
         {"tier", tier_name(sw.tier)},
         {"rail", sw.rail == kNoRail ? json(nullptr) : json(sw.rail)},
         {"unit", sw.unit < 0 ? json(nullptr) : json(sw.unit + 1)},
         {"answering", sw.answering},
         {"stall_ratio", number_or_null(sw.valid, sw.stall)},
         {"utilization", number_or_null(sw.valid && sw.utilization_valid, sw.utilization)},
         {"port", sw.valid ? json(sw.worst_port) : json(nullptr)}});
  }
  return out;
}

json hottest_ports_json(const std::vector<StatusPort>& hottest) {
  json out = json::array();
  for (const StatusPort& p : hottest) {
    json j{{"node_guid", guid_hex(p.guid)},
           {"node_name", p.name},
           {"port", p.port},
           {"tier", tier_name(p.tier)},
           {"stall_ratio", p.stall},
           {"utilization", number_or_null(p.utilization_valid, p.utilization)}};
    out.push_back(remote_fields(std::move(j), p.remote));
  }
  return out;
}

json degraded_links_json(const std::vector<StatusLink>& links) {
  json out = json::array();
  for (const StatusLink& l : links) {
    json j{{"node_guid", guid_hex(l.guid)},
           {"node_name", l.name},
           {"port", l.port},
           {"state", l.down ? "down" : "degraded"},
           {"link_width", l.width},
           {"link_speed", l.speed},
           {"rate_gbps", number_or_null(!l.down, l.rate_gbps)},
           {"peers_rate_gbps", number_or_null(!l.down, l.peers_rate_gbps)},
           {"reason", l.reason.empty() ? json(nullptr) : json(l.reason)}};
    out.push_back(remote_fields(std::move(j), l.remote));
  }
  return out;
}

json not_answering_json(const std::vector<StatusNode>& nodes) {
  json out = json::array();
  for (const StatusNode& n : nodes) {
    out.push_back({{"node_guid", guid_hex(n.guid)},
                   {"node_name", n.name},
                   {"node_type", n.type},
                   {"present", n.present}});
  }
  return out;
}

/// What the history keeps of a link (history_json.h), then what only the
/// live page has.
json link_health_json(const StatusLinkHealth& l) {
  // A node no longer in the fabric has no name: null here.
  auto end = [](const StatusLinkEnd& e) {
    return e.name.empty() && e.node == kNoNode ? json(nullptr) : json(e.name);
  };
  json j = history_link_json(l);
  j["node_name"] = end(l.node);
  j["remote_node_name"] = end(l.remote);
  j["conditions"] = l.conditions;
  j["link_width"] = l.width.empty() ? json(nullptr) : json(l.width);
  j["link_speed"] = l.speed.empty() ? json(nullptr) : json(l.speed);
  j["degraded_reason"] = l.degraded_reason.empty() ? json(nullptr) : json(l.degraded_reason);
  j["length_reason"] = l.length_reason.empty() ? json(nullptr) : json(l.length_reason);
  return j;
}

json unhealthy_links_json(const std::vector<StatusLinkHealth>& links) {
  json out = json::array();
  for (const StatusLinkHealth& l : links) out.push_back(link_health_json(l));
  return out;
}

/// null when the page has no event log (no history to read it from).
json events_json(const std::optional<std::vector<StatusEvent>>& events) {
  if (!events) return nullptr;
  json out = json::array();
  for (const StatusEvent& e : *events) {
    out.push_back({{"id", e.id},
                   {"state", e.state},
                   {"node_name", e.name},
                   {"port", e.port},
                   {"cause", e.cause},
                   {"start", e.start},
                   {"end", e.end ? json(*e.end) : json(nullptr)},
                   {"duration_seconds", e.duration_seconds},
                   {"peak_score", e.peak_score},
                   {"peak_victims", e.peak_victims},
                   {"jobs", e.jobs},
                   {"jobs_truncated", e.jobs_truncated}});
  }
  return out;
}

}  // namespace

std::string render_status_json(const StatusModel& m) {
  json out;
  out["sweep"] = sweep_json(m.sweep);
  out["roots"] = roots_json(m.roots);
  out["switches"] = switches_json(m.switches);
  out["hottest_ports"] = hottest_ports_json(m.hottest);
  out["degraded_links"] = degraded_links_json(m.degraded_links);
  out["degraded_links_total"] = m.degraded_total;
  out["links"] = unhealthy_links_json(m.links);
  out["links_total"] = m.links_total;
  out["not_answering"] = not_answering_json(m.not_answering);
  out["not_answering_total"] = m.not_answering_total;
  out["events"] = events_json(m.events);
  if (m.as_of) {
    // The page as it was (issue #35): from the history, not the live sweep.
    out["as_of"] = {{"requested_seconds", m.as_of->requested},
                    {"timestamp_seconds", m.as_of->time},
                    {"span_seconds", m.as_of->span},
                    {"sweeps", m.as_of->sweeps}};
  }
  // Names are valid UTF-8 already (the model sanitizes them); `replace`
  // keeps a stray byte from ever throwing on the publisher thread.
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace ibfx
