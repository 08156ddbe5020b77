#include "views/status_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "views/history_heatmap.h"
#include "views/history_job_view.h"
#include "views/history_sparkline.h"
#include "views/status_page_frame.h"
#include "views/web_escape.h"

namespace ibfx {
namespace {

// Heatmap geometry, in px: a row's label, then cells; rows longer than
// kColumns wrap (a 512-spine tier is 16 lines of 32).
constexpr int kLabel = 110;
constexpr int kCellW = 40;
constexpr int kCellH = 24;
constexpr int kGap = 3;
constexpr std::size_t kColumns = 32;

void switch_link(std::string& out, std::string_view name) {
  out += "<a href=\"/?node=";
  append_url_component(out, name);
  out += "\">";
  append_html(out, name);
  out += "</a>";
}

void port_cell(std::string& out, std::string_view name, int port) {
  out += "<td>";
  switch_link(out, name);
  out += " port ";
  out += std::to_string(port);
  out += "</td>";
}

void far_end_cell(std::string& out, const StatusFarEnd& r) {
  out += "<td>";
  if (r.name.empty() && r.port == 0) {
    out += "&ndash;";
  } else {
    append_html(out, r.name);
    out += " port ";
    out += std::to_string(r.port);
  }
  out += "</td>";
}

void number_cell(std::string& out, const std::string& text) {
  out += "<td class=\"n\">";
  out += text;
  out += "</td>";
}

std::string percent(double v) {
  return std::to_string(static_cast<int>(std::lround(v * 100))) + "%";
}

void append_cell(std::string& out, const StatusSwitch& sw, int x, int y) {
  out += "<a href=\"/?node=";
  append_url_component(out, sw.name);
  out += "\"><title>";
  // The tooltip: "name, worst port, W, U".
  append_html(out, sw.name);
  if (sw.root) out += " (root of congestion)";
  if (sw.link_trouble) out += " (unhealthy link)";
  if (!sw.answering) {
    out += ", not answering";
  } else if (sw.valid) {
    out += ", port " + std::to_string(sw.worst_port) +
           stall_tooltip(sw.stall, sw.utilization_valid, sw.utilization);
  } else {
    out += ", no data";
  }
  // Width, height and text-anchor come from the style (#heatmap-svg): per
  // cell they would be a fifth of a 98k-port page.
  out += "</title><rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" fill=\"" +
         stall_fill(sw.valid && sw.answering, sw.stall) +
         // A root's switch is outlined: where to look first, whatever its own W.
         (sw.root ? "\" class=\"root\"/>" : "\"/>");
  if (!sw.answering) {
    // Crossed out: a shape, not only a colour.
    out += "<path d=\"M" + std::to_string(x) + " " + std::to_string(y) + "l" +
           std::to_string(kCellW) + " " + std::to_string(kCellH) + "m0 -" + std::to_string(kCellH) +
           "l-" + std::to_string(kCellW) + " " + std::to_string(kCellH) +
           "\" stroke=\"#000\" stroke-width=\"2\"/>";
  }
  if (sw.link_trouble) {
    // A cable of this switch is unhealthy (the Links table): a corner
    // triangle, a shape and not only a colour.
    out += "<path d=\"M" + std::to_string(x + kCellW - 10) + " " + std::to_string(y) +
           "h10v10z\" fill=\"#ff7f00\" stroke=\"#000\" stroke-width=\"1\"/>";
  }
  out += "<text x=\"" + std::to_string(x + kCellW / 2) + "\" y=\"" + std::to_string(y + 16) +
         (!sw.valid || stall_colour_is_light(sw.stall) ? "\">" : "\" class=\"d\">") +
         (sw.valid ? percent(sw.stall) : std::string("&ndash;")) + "</text></a>";
}

void append_heatmap(std::string& out, const StatusModel& m) {
  out += "<h2 id=\"heatmap\">Heatmap of pain</h2>\n";
  if (m.rows.empty()) {
    out += "<p class=\"muted\">No switch discovered yet.</p>\n";
    return;
  }
  if (!m.sweep.scored) {
    out += "<p class=\"muted\">No stall ratios yet: they need two sweeps.</p>\n";
  }
  out +=
      "<p>One cell per switch, coloured by the stall ratio W of its worst port over the last "
      "interval. Leaves: one row per rail, one column per scalable unit; then the spine and "
      "core tiers. Select a cell for the switch's ports.</p>\n";
  int lines = 0;
  for (const StatusRow& row : m.rows) {
    lines += static_cast<int>((row.switches.size() + kColumns - 1) / kColumns);
  }
  const std::size_t widest = std::min<std::size_t>(
      kColumns, std::max_element(m.rows.begin(), m.rows.end(), [](const auto& a, const auto& b) {
                  return a.switches.size() < b.switches.size();
                })->switches.size());
  const int width = kLabel + static_cast<int>(widest) * (kCellW + kGap);
  const int height = lines * (kCellH + kGap) + 20;
  out += "<svg id=\"heatmap-svg\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) + "\" role=\"img\" aria-label=\"heatmap of switch stall ratios\">";
  // Column headers: the scalable units of the leaf rows.
  for (std::size_t c = 0; c < widest; ++c) {
    out += "<text x=\"" +
           std::to_string(kLabel + static_cast<int>(c) * (kCellW + kGap) + kCellW / 2) +
           "\" y=\"12\" text-anchor=\"middle\" fill=\"#666\">" + std::to_string(c + 1) + "</text>";
  }
  int y = 18;
  for (const StatusRow& row : m.rows) {
    out += "<text x=\"0\" y=\"" + std::to_string(y + 16) + "\">";
    append_html(out, row.label);
    out += "</text>";
    for (std::size_t k = 0; k < row.switches.size(); ++k) {
      if (k > 0 && k % kColumns == 0) y += kCellH + kGap;
      const int x = kLabel + static_cast<int>(k % kColumns) * (kCellW + kGap);
      append_cell(out, m.switches[row.switches[k]], x, y);
    }
    y += kCellH + kGap;
  }
  out += "</svg>\n";
  append_stall_legend(out);
}

// Who sends into a root (issue #41): the top few HCA ports whose routes
// cross it, by bytes sent, with the jobs on them; how many more; and how
// many destinations the root port carries against its peers.
void append_senders_cell(std::string& out, const StatusRoot& r) {
  constexpr std::size_t kShown = 3;
  out += "<td>";
  if (!r.sender_ports) {
    out += "<span class=\"muted\">routes unknown</span></td>";
    return;
  }
  for (std::size_t i = 0; i < r.senders.size() && i < kShown; ++i) {
    const StatusSender& s = r.senders[i];
    if (i > 0) out += "<br>";
    append_html(out, s.name);
    out += ":" + std::to_string(s.port) + " " + fixed(s.bytes_per_second / 1e9, 2) + " GB/s";
    if (s.jobs && !s.jobs->empty()) {
      out += " (";
      for (std::size_t j = 0; j < s.jobs->size(); ++j) {
        if (j > 0) out += ", ";
        append_job_link(out, (*s.jobs)[j]);
      }
      out += ")";
    }
  }
  if (*r.sender_ports > std::min(kShown, r.senders.size())) {
    out += "<br><span class=\"muted\">of " + std::to_string(*r.sender_ports) +
           " ports routed through it";
    if (r.routes) {
      out += ", " + std::to_string(*r.routes) + " destinations";
      if (r.peer_routes >= 0) out += " (its peers " + fixed(r.peer_routes, 1) + ")";
    }
    out += "</span>";
  }
  out += "</td>";
}

void append_roots(std::string& out, const StatusModel& m) {
  out += "<h2>Roots of congestion</h2>\n";
  if (!m.sweep.scored) {
    out += "<p class=\"muted\">None yet: scores need two sweeps.</p>\n";
    return;
  }
  if (m.roots.empty()) {
    out += "<p>None: no port is congested.</p>\n";
    return;
  }
  out +=
      "<p>Where congestion starts; the stalled ports upstream are its victims: fix the root, "
      "not them (docs/scores.md, \"Root or victim\").</p>\n"
      "<table id=\"roots\"><thead><tr><th>Root port</th><th>Tier</th><th>Cause</th>"
      "<th>Score</th><th>Victims</th><th>W</th><th>U</th><th>Far end</th><th>Jobs hurt</th>"
      "<th>Sending into it</th>";
  if (m.history) out += "<th>Score over time</th>";
  out += "</tr></thead><tbody>\n";
  for (const StatusRoot& r : m.roots) {
    out += "<tr>";
    port_cell(out, r.name, r.port);
    out += "<td>" + std::string(tier_name(r.tier)) + "</td><td>";
    append_html(out, r.cause);
    if (r.held) out += " (held)";
    // A cable with a BER or flapping condition may be why the port is slow
    // (retransmissions, retraining): fix the link first (docs/links.md).
    if (!r.link_condition.empty()) {
      out += "; its cable: ";
      append_html(out, r.link_condition);
    }
    out += "</td>";
    number_cell(out, fixed(r.score, 2));
    number_cell(out, std::to_string(r.victims));
    number_cell(out, fixed(r.stall, 3));
    number_cell(out, fixed(r.utilization, 3));
    far_end_cell(out, r.remote);
    out += "<td>";
    if (!r.jobs) {
      out += "<span class=\"muted\">unknown</span>";
    } else if (r.jobs->empty()) {
      out += "none";
    } else {
      for (std::size_t j = 0; j < r.jobs->size(); ++j) {
        if (j > 0) out += ", ";
        append_job_link(out, (*r.jobs)[j]);
      }
    }
    out += "</td>";
    append_senders_cell(out, r);
    if (m.history) {
      out += "<td>";
      const double to = m.sweep.timestamp_seconds;
      append_score_sparkline(out, *m.history, r.guid, r.name, r.port, to - m.history_window_seconds,
                             to);
      out += "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

void append_hottest(std::string& out, const StatusModel& m) {
  out += "<h2>Hottest ports</h2>\n";
  if (m.hottest.empty()) {
    out += "<p class=\"muted\">None yet.</p>\n";
    return;
  }
  out +=
      "<table id=\"hottest\"><thead><tr><th>Port</th><th>W</th><th>U</th><th>Tier</th>"
      "<th>Far end</th></tr></thead><tbody>\n";
  for (const StatusPort& p : m.hottest) {
    out += "<tr>";
    port_cell(out, p.name, p.port);
    number_cell(out, fixed(p.stall, 3));
    number_cell(out, p.utilization_valid ? fixed(p.utilization, 3) : "&ndash;");
    out += "<td>" + std::string(tier_name(p.tier)) + "</td>";
    far_end_cell(out, p.remote);
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

void more_rows(std::string& out, std::size_t shown, std::size_t total) {
  if (total > shown) {
    out += "<p class=\"muted\">&hellip; and " + std::to_string(total - shown) + " more.</p>\n";
  }
}

void append_links(std::string& out, const StatusModel& m) {
  out += "<h2>Links down or degraded</h2>\n";
  if (m.as_of) {
    // The history keeps link conditions, not the rates behind this table.
    out +=
        "<p class=\"muted\">Not kept by the history: a link down or degraded then is in "
        "the Links table.</p>\n";
    return;
  }
  if (m.degraded_links.empty()) {
    out += "<p>None: every cabled link is up at the rate of its peers.</p>\n";
    return;
  }
  out +=
      "<p>Down, or up at a lower width or speed than both ends enable or than the links of the "
      "same kind (same tier and rail, same kind of node at the far end).</p>\n"
      "<table id=\"links\"><thead><tr><th>Port</th><th>State</th><th>Width</th><th>Speed</th>"
      "<th>Gb/s</th><th>Peers Gb/s</th><th>Far end</th></tr></thead><tbody>\n";
  for (const StatusLink& l : m.degraded_links) {
    out += "<tr>";
    port_cell(out, l.name, l.port);
    if (l.down) {
      out += "<td>down</td>";
    } else {
      out += "<td>degraded: ";
      append_html(out, l.reason);
      out += "</td>";
    }
    out += "<td>" + html_escaped(l.width) + "</td><td>" + html_escaped(l.speed) + "</td>";
    number_cell(out, l.down ? "&ndash;" : fixed(l.rate_gbps, 0));
    number_cell(out, l.down ? "&ndash;" : fixed(l.peers_rate_gbps, 0));
    far_end_cell(out, l.remote);
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  more_rows(out, m.degraded_links.size(), m.degraded_total);
}

// The unhealthy cables (issue #34, docs/links.md), worst first; the end
// whose receiver sees the worse direction first.
void append_link_health(std::string& out, const StatusModel& m) {
  out += "<h2>Links</h2>\n";
  if (m.links.empty()) {
    out += "<p>None: no cable has bit errors, link errors, downs or a degraded rate.</p>\n";
    return;
  }
  out +=
      "<p>Unhealthy cables, worst first (<a href=\"/events\">/events</a> has their history). "
      "BER in: the symbol bit-error rate into the port (its receiver's errors); BER out: into "
      "the far end; &ge;: the 16-bit counter saturated.</p>\n"
      "<table id=\"link-health\"><thead><tr><th>Port (receives worse)</th><th>Condition</th>"
      "<th>BER in</th><th>BER out</th><th>Downs, last hour</th><th>Since</th><th>Far end</th>"
      "</tr></thead><tbody>\n";
  auto ber = [](const std::optional<double>& b, bool at_least) {
    if (!b) return std::string("&ndash;");
    char buf[24];
    std::snprintf(buf, sizeof buf, "%.1e", *b);
    return (at_least ? "&ge;" : "") + std::string(buf);
  };
  for (const StatusLinkHealth& l : m.links) {
    out += "<tr>";
    if (l.node.name.empty()) {
      out += "<td>" + guid_hex(l.node.guid) + " port " + std::to_string(l.node.port) + "</td>";
    } else {
      port_cell(out, l.node.name, l.node.port);
    }
    out += "<td>";
    append_html(out, l.condition);
    if (!l.degraded_reason.empty()) {
      out += l.condition == "degraded" ? ": " : "; degraded: ";
      append_html(out, l.degraded_reason);
    }
    if (!l.length_reason.empty()) {
      out += l.condition == "length_outlier" ? ": " : "; length_outlier: ";
      append_html(out, l.length_reason);
    }
    out += "</td>";
    number_cell(out, ber(l.symbol_ber, l.symbol_ber_at_least));
    number_cell(out, ber(l.remote_symbol_ber, false));
    number_cell(out, std::to_string(l.downs_last_hour));
    out += "<td>" + utc_time(l.since) + "</td>";
    far_end_cell(out, StatusFarEnd{l.remote.guid,
                                   l.remote.name.empty() ? guid_hex(l.remote.guid) : l.remote.name,
                                   l.remote.port});
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  more_rows(out, m.links.size(), m.links_total);
}

void append_not_answering(std::string& out, const StatusModel& m) {
  out += "<h2>Nodes not answering</h2>\n";
  if (m.not_answering.empty()) {
    out += "<p>None: every node swept answered.</p>\n";
    return;
  }
  out +=
      "<table id=\"not-answering\"><thead><tr><th>Node</th><th>GUID</th><th>Type</th>"
      "</tr></thead><tbody>\n";
  for (const StatusNode& n : m.not_answering) {
    out += "<tr><td>";
    switch_link(out, n.name);
    if (!n.present) out += " (missed by the last discovery)";
    out += "</td><td>" + guid_hex(n.guid) + "</td><td>" + n.type + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  more_rows(out, m.not_answering.size(), m.not_answering_total);
}

void append_events(std::string& out, const StatusModel& m) {
  out += "<h2>Congestion events</h2>\n";
  if (!m.events) {
    out += "<p class=\"muted\">Not available in this daemon.</p>\n";
    return;
  }
  if (m.events->empty()) {
    out += "<p>None active or recent.</p>\n";
    return;
  }
  out +=
      "<table id=\"events\"><thead><tr><th>Id</th><th>State</th><th>Root port</th>"
      "<th>Cause</th><th>Started</th><th>Ended</th><th>Duration</th><th>Peak score</th>"
      "<th>Peak victims</th><th>Jobs hurt</th>";
  if (m.history) out += "<th>Score over time</th>";
  out += "</tr></thead><tbody>\n";
  for (const StatusEvent& e : *m.events) {
    out += "<tr>";
    number_cell(out, std::to_string(e.id));
    out += "<td>";
    append_html(out, e.state);
    out += "</td>";
    port_cell(out, e.name, e.port);
    out += "<td>";
    append_html(out, e.cause);
    out +=
        "</td><td>" + utc_time(e.start) + "</td><td>" + (e.end ? utc_time(*e.end) : "") + "</td>";
    number_cell(out, fixed(e.duration_seconds, 0) + " s");
    number_cell(out, fixed(e.peak_score, 2));
    number_cell(out, std::to_string(e.peak_victims));
    out += "<td>";
    if (e.jobs.empty()) out += "none";
    for (std::size_t j = 0; j < e.jobs.size(); ++j) {
      if (j > 0) out += ", ";
      append_job_link(out, e.jobs[j]);  // its view, /?job= (issue #35)
    }
    if (e.jobs_truncated) out += ", &hellip;";
    out += "</td>";
    if (m.history) {
      out += "<td>";
      append_score_sparkline(out, *m.history, 0, e.name, e.port, e.start - 60,
                             e.end ? *e.end + 60 : m.sweep.timestamp_seconds);
      out += "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

void append_sweep(std::string& out, const StatusModel& m) {
  const StatusSweep& s = m.sweep;
  out += "<h2>Sweep health</h2>\n<table id=\"sweep\"><tbody>\n<tr><th>Last sweep</th><td>" +
         utc_time(s.timestamp_seconds) + "</td></tr>\n<tr><th>Duration</th><td>" +
         fixed(s.duration_seconds, 3) + " s" + (s.completed ? "" : " (cut short by the budget)") +
         "</td></tr>\n<tr><th>Interval of W and U</th><td>" +
         (s.interval_seconds > 0 ? fixed(s.interval_seconds, 1) + " s" : std::string("&ndash;")) +
         "</td></tr>\n<tr><th>Nodes answering</th><td>" + std::to_string(s.nodes_answering) +
         " of " + std::to_string(s.nodes_swept) + " swept (" + std::to_string(s.nodes) +
         " known)</td></tr>\n<tr><th>Ports read</th><td>" + std::to_string(s.ports_read) + " of " +
         std::to_string(s.ports) + "</td></tr>\n";
  if (s.stale_nodes > 0) {
    out += "<tr><th>Stale nodes</th><td>" + std::to_string(s.stale_nodes) + "</td></tr>\n";
  }
  // The forwarding tables behind /route and the senders (docs/routes.md).
  out += "<tr><th>Forwarding tables</th><td>";
  if (!s.routes_known) {
    out += "none read yet (or routes.enabled is off)";
  } else {
    out += std::to_string(s.route_tables) + " switches, the oldest confirmed " +
           fixed(s.route_oldest_age_seconds, 0) + " s ago";
    if (s.route_tables_stale > 0) out += ", " + std::to_string(s.route_tables_stale) + " stale";
    if (s.route_tables_incomplete > 0) {
      out += ", " + std::to_string(s.route_tables_incomplete) + " not read whole yet";
    }
    out += s.route_full_read_seconds > 0
               ? "; last full read " + fixed(s.route_full_read_seconds, 1) + " s"
               : std::string("; first full read under way");
    out += "; " + std::to_string(s.route_changes) + " re-routes seen";
  }
  out += "</td></tr>\n";
  out += "<tr><th>This daemon's port</th><td>";
  if (s.local_name.empty()) {
    out += "&ndash;";
  } else {
    append_html(out, s.local_name);
    out += ": ";
    append_html(out, s.local_port_state);
  }
  out += "</td></tr>\n</tbody></table>\n";
}

}  // namespace

std::string render_status_html(const StatusModel& m) {
  std::string out;
  out.reserve(4096 + m.switches.size() * 220);
  append_page_start(out, "InfiniBand fabric status", m.telemetry_path, m.refresh_seconds,
                    "#heatmap-svg rect{width:" + std::to_string(kCellW) +
                        "px;height:" + std::to_string(kCellH) +
                        "px}#heatmap-svg a text{text-anchor:middle}#heatmap-svg text.d{fill:#fff}"
                        "#heatmap-svg rect.root{stroke:#e8000b;stroke-width:4px}" +
                        (m.history || m.as_of ? history_heatmap_style() : std::string()));
  out += "<h1>InfiniBand fabric status</h1>\n<p>";
  if (m.sweep.timestamp_seconds > 0 && m.sweep.nodes > 0) {
    out += "Sweep of " + utc_time(m.sweep.timestamp_seconds) + ": " +
           std::to_string(m.roots.size()) + (m.roots.size() == 1 ? " root" : " roots") +
           " of congestion, " + std::to_string(m.degraded_total) + " links down or degraded, " +
           std::to_string(m.not_answering_total) + " nodes not answering.";
  } else {
    out += "No sweep of a discovered fabric yet.";
  }
  out += "</p>\n";
  append_as_of_banner(out, m);
  append_heatmap(out, m);
  if (m.history) append_history_heatmap(out, m);
  append_roots(out, m);
  append_hottest(out, m);
  append_link_health(out, m);
  append_unhealthy_nodes_html(out, m.unhealthy_nodes, m.as_of.has_value());
  append_links(out, m);
  append_not_answering(out, m);
  append_events(out, m);
  append_sweep(out, m);
  append_page_end(out);
  return out;
}

}  // namespace ibfx
