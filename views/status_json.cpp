#include "views/status_json.h"

#include <nlohmann/json.hpp>

#include "history/history_json.h"
#include "views/history_capture.h"

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

}  // namespace

std::string render_status_json(const StatusModel& m) {
  const StatusSweep& s = m.sweep;
  json out;
  // The fields /history.json and the history's file share with it come
  // from one place (history_json.h); the live page adds what only it has.
  json sweep = history_sweep_json(history_sweep(s));
  sweep["timestamp_seconds"] = s.timestamp_seconds;
  sweep["stale_nodes"] = s.stale_nodes;
  sweep["local_node_name"] = s.local_name.empty() ? json(nullptr) : json(s.local_name);
  sweep["local_port_state"] = s.local_name.empty() ? json(nullptr) : json(s.local_port_state);
  out["sweep"] = std::move(sweep);
  json roots = json::array();
  for (const StatusRoot& r : m.roots) {
    json j = remote_fields(history_root_json(history_root(r)), r.remote);
    j["held"] = r.held;
    j["link_condition"] = r.link_condition.empty() ? json(nullptr) : json(r.link_condition);
    roots.push_back(std::move(j));
  }
  out["roots"] = std::move(roots);
  json switches = json::array();
  for (const StatusSwitch& sw : m.switches) {
    switches.push_back(
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
  out["switches"] = std::move(switches);
  json hottest = json::array();
  for (const StatusPort& p : m.hottest) {
    json j{{"node_guid", guid_hex(p.guid)},
           {"node_name", p.name},
           {"port", p.port},
           {"tier", tier_name(p.tier)},
           {"stall_ratio", p.stall},
           {"utilization", number_or_null(p.utilization_valid, p.utilization)}};
    hottest.push_back(remote_fields(std::move(j), p.remote));
  }
  out["hottest_ports"] = std::move(hottest);
  json links = json::array();
  for (const StatusLink& l : m.degraded_links) {
    json j{{"node_guid", guid_hex(l.guid)},
           {"node_name", l.name},
           {"port", l.port},
           {"state", l.down ? "down" : "degraded"},
           {"link_width", l.width},
           {"link_speed", l.speed},
           {"rate_gbps", number_or_null(!l.down, l.rate_gbps)},
           {"peers_rate_gbps", number_or_null(!l.down, l.peers_rate_gbps)},
           {"reason", l.reason.empty() ? json(nullptr) : json(l.reason)}};
    links.push_back(remote_fields(std::move(j), l.remote));
  }
  out["degraded_links"] = std::move(links);
  out["degraded_links_total"] = m.degraded_total;
  json silent = json::array();
  for (const StatusNode& n : m.not_answering) {
    silent.push_back({{"node_guid", guid_hex(n.guid)},
                      {"node_name", n.name},
                      {"node_type", n.type},
                      {"present", n.present}});
  }
  json unhealthy = json::array();
  for (const StatusLinkHealth& l : m.links) {
    auto end = [](const StatusLinkEnd& e) {
      return e.name.empty() && e.node == kNoNode ? json(nullptr) : json(e.name);
    };
    auto ber = [](const std::optional<double>& b) { return b ? json(*b) : json(nullptr); };
    unhealthy.push_back(
        {{"node_guid", guid_hex(l.node.guid)},
         {"node_name", end(l.node)},
         {"port", l.node.port},
         {"remote_node_guid", guid_hex(l.remote.guid)},
         {"remote_node_name", end(l.remote)},
         {"remote_port", l.remote.port},
         {"remote_read", l.remote.read},
         {"condition", l.condition},
         {"conditions", l.conditions},
         {"symbol_ber", ber(l.symbol_ber)},
         {"symbol_ber_at_least", l.symbol_ber_at_least},
         {"remote_symbol_ber", ber(l.remote_symbol_ber)},
         {"downs_last_hour", l.downs_last_hour},
         {"since", l.since},
         {"link_width", l.width.empty() ? json(nullptr) : json(l.width)},
         {"link_speed", l.speed.empty() ? json(nullptr) : json(l.speed)},
         {"degraded_reason", l.degraded_reason.empty() ? json(nullptr) : json(l.degraded_reason)},
         {"length_reason", l.length_reason.empty() ? json(nullptr) : json(l.length_reason)},
         {"jobs", l.jobs ? json(*l.jobs) : json(nullptr)}});
  }
  out["links"] = std::move(unhealthy);
  out["links_total"] = m.links_total;
  out["not_answering"] = std::move(silent);
  out["not_answering_total"] = m.not_answering_total;
  if (m.events) {
    json events = json::array();
    for (const StatusEvent& e : *m.events) {
      events.push_back({{"id", e.id},
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
    out["events"] = std::move(events);
  } else {
    out["events"] = nullptr;
  }
  // Names are valid UTF-8 already (the model sanitizes them); `replace`
  // keeps a stray byte from ever throwing on the publisher thread.
  if (m.as_of) {
    // The page as it was (issue #35): from the history, not the live sweep.
    out["as_of"] = {{"requested_seconds", m.as_of->requested},
                    {"timestamp_seconds", m.as_of->time},
                    {"span_seconds", m.as_of->span},
                    {"sweeps", m.as_of->sweeps}};
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace ibfx
