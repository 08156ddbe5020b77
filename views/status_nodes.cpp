#include "views/status_nodes.h"

#include <unordered_map>

#include "base/slurm_node.h"
#include "nodes/node_health.h"
#include "views/status_links.h"
#include "views/status_page_frame.h"
#include "views/web_escape.h"

namespace ibfx {

StatusUnhealthyNodes status_unhealthy_nodes(const Snapshot& s, std::size_t max_rows) {
  StatusUnhealthyNodes out;
  const NodeHealthReport& r = *s.nodes;
  out.unhealthy = r.unhealthy;
  out.incident = r.incident;
  // Each listed host's HCA nodes, for the jobs with a port there.
  std::unordered_map<std::int32_t, std::size_t> row_of_node;
  for (const NodeVerdict wanted : {NodeVerdict::kUnhealthy, NodeVerdict::kIncident}) {
    for (const HostHealth& h : r.hosts) {
      if (h.verdict != wanted || out.rows.size() >= max_rows) continue;
      StatusUnhealthyNode n;
      n.host = valid_utf8(h.host);
      n.verdict = std::string(node_verdict_name(h.verdict));
      n.reason = h.reason;
      n.since = h.since;
      n.recover_at = h.recover_at;
      n.rails_active = h.rails_active;
      n.rails_expected = h.rails_expected;
      if (s.jobs.enabled) n.jobs.emplace();
      for (const HcaPortHealth& p : h.ports) row_of_node[p.node] = out.rows.size();
      out.rows.push_back(std::move(n));
    }
  }
  if (!s.jobs.enabled) return out;
  const auto& ports = s.analysis.result.ports;
  for (const JobPorts& j : s.jobs.join.jobs) {
    std::vector<bool> listed(out.rows.size(), false);
    for (const std::size_t p : j.ports) {
      if (p >= ports.size()) continue;
      const auto it = row_of_node.find(static_cast<std::int32_t>(ports[p].node));
      if (it == row_of_node.end() || listed[it->second]) continue;
      listed[it->second] = true;
      out.rows[it->second].jobs->push_back(job_label(j));
    }
  }
  return out;
}

void append_unhealthy_nodes_html(std::string& out, const StatusUnhealthyNodes& nodes,
                                 bool historic) {
  out += "<h2>Unhealthy nodes</h2>\n";
  if (historic) {
    out +=
        "<p class=\"muted\">Not kept by the history: <a href=\"/nodes\">/nodes</a> has the "
        "hosts unhealthy now.</p>\n";
    return;
  }
  if (nodes.incident > 0) {
    out += "<p><strong>Fabric incident:</strong> " + std::to_string(nodes.incident) +
           " hosts turned unhealthy together, more than bad cables explain (a leaf, a spine, the "
           "subnet manager). They are not drained for it (the blast-radius guard, "
           "nodes.incident_share).</p>\n";
  }
  if (nodes.rows.empty()) {
    out +=
        "<p>None: every host has all its rails, and no HCA cable is down, flapping or "
        "erring.</p>\n";
    return;
  }
  out +=
      "<p>Hosts Slurm's health check (<code>check-node</code>) drains, and those held as a "
      "fabric incident; <a href=\"/nodes?format=text\">/nodes</a> has them all.</p>\n"
      "<table id=\"unhealthy-nodes\"><thead><tr><th>Host</th><th>Verdict</th><th>Reason</th>"
      "<th>Rails</th><th>Since</th><th>Jobs there</th></tr></thead><tbody>\n";
  for (const StatusUnhealthyNode& n : nodes.rows) {
    out += "<tr><td>";
    if (valid_node_host(n.host)) {
      // valid_node_host: letters, digits, ".-_" only, nothing to escape in a path.
      out += "<a href=\"/nodes/" + n.host + "?format=text\">" + n.host + "</a>";
    } else {
      append_html(out, n.host);
    }
    out += "</td><td>";
    append_html(out, n.verdict);
    out += "</td><td>";
    append_html(out, n.reason);
    out += "</td><td>" + std::to_string(n.rails_active) + " of " +
           std::to_string(n.rails_expected) + "</td><td>";
    append_html(out, utc_time(n.since));
    if (n.recover_at > 0) {
      out += " (recovering until ";
      append_html(out, utc_time(n.recover_at));
      out += ")";
    }
    out += "</td><td>";
    if (!n.jobs) {
      out += "&ndash;";
    } else {
      for (std::size_t k = 0; k < n.jobs->size(); ++k) {
        if (k > 0) out += ", ";
        append_html(out, (*n.jobs)[k]);
      }
    }
    out += "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  const std::size_t total = nodes.unhealthy + nodes.incident;
  if (total > nodes.rows.size()) {
    out += "<p class=\"muted\">&hellip; and " + std::to_string(total - nodes.rows.size()) +
           " more.</p>\n";
  }
}

}  // namespace ibfx
