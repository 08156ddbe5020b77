#include "api/node_health_view.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/json_fields.h"
#include "base/utc_time.h"

namespace ibfx {
namespace {

using nlohmann::json;

// Why no verdict can be given for the snapshot as a whole, or "".
std::string stale_reason(const Snapshot& s, double now) {
  if (!s.fabric) return "no discovery yet";
  const double age = now - s.sweep_timestamp_seconds;
  if (s.nodes->stale_after_seconds > 0 && age > s.nodes->stale_after_seconds) {
    return "the last sweep is " + std::to_string(static_cast<long long>(age)) +
           " s old (nodes.stale_after)";
  }
  return {};
}

std::string far_name(const Snapshot& s, std::int32_t node) {
  if (node == kNoNode || !s.fabric || static_cast<std::size_t>(node) >= s.fabric->nodes.size()) {
    return {};
  }
  const auto n = static_cast<std::size_t>(node);
  return n < s.node_names.size() && !s.node_names[n].empty() ? s.node_names[n]
                                                             : s.fabric->nodes[n].description;
}

std::string guid_text(std::uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

json host_summary(const HostHealth& h) {
  json j;
  j["host"] = h.host;
  j["verdict"] = std::string(node_verdict_name(h.verdict));
  j["reason"] = h.reason;
  j["since"] = h.since;
  j["recover_at"] = h.recover_at;
  j["rails_active"] = h.rails_active;
  j["rails_expected"] = h.rails_expected;
  return j;
}

json host_json(const Snapshot& s, const HostHealth& h) {
  json j = host_summary(h);
  json ports = json::array();
  for (const HcaPortHealth& p : h.ports) {
    json q;
    q["device"] = p.device;
    q["port"] = p.port;
    q["rail"] = p.rail;
    q["active"] = p.active;
    q["condition"] = std::string(link_condition_name(p.condition));
    q["condition_since"] = p.condition_since;
    q["ber"] = p.ber < 0 ? json(nullptr) : json(p.ber);
    q["downs_last_hour"] = p.downs_last_hour;
    if (p.node != kNoNode && s.fabric &&
        static_cast<std::size_t>(p.node) < s.fabric->nodes.size()) {
      q["node_guid"] = guid_text(s.fabric->nodes[static_cast<std::size_t>(p.node)].guid);
    }
    if (p.far_node != kNoNode && s.fabric &&
        static_cast<std::size_t>(p.far_node) < s.fabric->nodes.size()) {
      q["remote_node_name"] = far_name(s, p.far_node);
      q["remote_node_guid"] = guid_text(s.fabric->nodes[static_cast<std::size_t>(p.far_node)].guid);
      q["remote_port"] = p.far_port;
    }
    ports.push_back(std::move(q));
  }
  j["ports"] = std::move(ports);
  return j;
}

// One line, for a terminal: the reason is printable already, the host is
// valid_node_host's; the far end's name is made safe.
std::string host_text(const Snapshot& s, const HostHealth& h, bool ports) {
  std::string out = h.host + " " + std::string(node_verdict_name(h.verdict)) + " rails " +
                    std::to_string(h.rails_active) + "/" + std::to_string(h.rails_expected);
  if (!h.reason.empty()) out += " " + h.reason;
  if (h.recover_at > 0) out += " (recovering until " + utc_time_text(h.recover_at) + ")";
  out += "\n";
  if (!ports) return out;
  for (const HcaPortHealth& p : h.ports) {
    out += "  " + p.device + " port " + std::to_string(p.port) + " " +
           (p.active ? "active" : "inactive") + " " + std::string(link_condition_name(p.condition));
    if (p.far_node != kNoNode) {
      out +=
          " -> " + safe_node_word(far_name(s, p.far_node)) + " port " + std::to_string(p.far_port);
    }
    if (p.downs_last_hour > 0) out += " downs_last_hour " + std::to_string(p.downs_last_hour);
    out += "\n";
  }
  return out;
}

NodeHealthAnswer unknown(int status, std::string_view host, const std::string& why, bool text) {
  NodeHealthAnswer a;
  a.status = status;
  if (text) {
    a.content_type = "text/plain; charset=utf-8";
    a.body = std::string(host) + " unknown " + why + "\n";
  } else {
    a.content_type = "application/json";
    json j;
    j["host"] = std::string(host);
    j["verdict"] = "unknown";
    j["reason"] = why;
    a.body = json_fields::dump(j) + "\n";
  }
  return a;
}

}  // namespace

NodeHealthAnswer render_node_health(const Snapshot& s, std::string_view host, double now,
                                    bool text) {
  if (const std::string stale = stale_reason(s, now); !stale.empty()) {
    return unknown(200, host, stale, text);
  }
  const HostHealth* h = s.nodes->find(host);
  if (!h) {
    return unknown(404, host, "no HCA of this host in the fabric (jobs.host_regex, jobs.host_map)",
                   text);
  }
  NodeHealthAnswer a;
  if (text) {
    a.content_type = "text/plain; charset=utf-8";
    a.body = host_text(s, *h, true);
    return a;
  }
  a.content_type = "application/json";
  json j = host_json(s, *h);
  j["sweep_timestamp"] = s.sweep_timestamp_seconds;
  j["recover_after_seconds"] = s.nodes->recover_after_seconds;
  a.body = json_fields::dump(j) + "\n";
  return a;
}

NodeHealthAnswer render_nodes_health(const Snapshot& s, double now, bool text) {
  NodeHealthAnswer a;
  const std::string stale = stale_reason(s, now);
  const NodeHealthReport& r = *s.nodes;
  if (text) {
    a.content_type = "text/plain; charset=utf-8";
    a.body = "# hosts " + std::to_string(r.hosts.size()) + " unhealthy " +
             std::to_string(r.unhealthy) + " fabric_incident " + std::to_string(r.incident) +
             (stale.empty() ? "" : " unknown: " + stale) + "\n";
    for (const HostHealth& h : r.hosts) {
      if (h.verdict != NodeVerdict::kHealthy) a.body += host_text(s, h, false);
    }
    return a;
  }
  a.content_type = "application/json";
  json j;
  j["sweep_timestamp"] = s.sweep_timestamp_seconds;
  j["stale"] = stale.empty() ? json(nullptr) : json(stale);
  j["hosts"] = r.hosts.size();
  j["unhealthy"] = r.unhealthy;
  j["fabric_incident"] = r.incident;
  j["recover_after_seconds"] = r.recover_after_seconds;
  json nodes = json::array();
  for (const HostHealth& h : r.hosts) {
    if (h.verdict != NodeVerdict::kHealthy) nodes.push_back(host_summary(h));
  }
  j["nodes"] = std::move(nodes);
  a.body = json_fields::dump(j) + "\n";
  return a;
}

}  // namespace ibfx
