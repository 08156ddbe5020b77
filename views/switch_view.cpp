#include "views/switch_view.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "views/status_model.h"
#include "views/status_page_frame.h"
#include "views/web_escape.h"

namespace ibfx {
namespace {

constexpr int kCellW = 64;
constexpr int kCellH = 40;
constexpr int kGap = 4;
constexpr int kColumns = 16;

struct PortRow {
  const FabricPort* port = nullptr;
  const PortScore* score = nullptr;  // null: no W/U for it
};

std::string far_end_text(const Snapshot& s, const FabricPort& fp) {
  if (!fp.linked() || static_cast<std::size_t>(fp.remote_node) >= s.node_names.size()) return "";
  return s.node_names[static_cast<std::size_t>(fp.remote_node)] + " port " +
         std::to_string(fp.remote_port);
}

/// The node's ports in order, each with its W/U score when the analysis
/// has a valid one.
std::vector<PortRow> port_rows(const Snapshot& s, std::size_t node) {
  const FabricNode& fn = s.fabric->nodes[node];
  std::vector<PortRow> rows(fn.ports.size());
  for (std::size_t i = 0; i < fn.ports.size(); ++i) rows[i].port = &fn.ports[i];
  for (const PortScore& ps : s.analysis.result.ports) {
    if (ps.node == static_cast<std::int32_t>(node) && ps.port_index < rows.size() && ps.valid) {
      rows[ps.port_index].score = &ps;
    }
  }
  return rows;
}

/// The page refreshes once a sweep, within 5 s .. 5 min; 30 s when the
/// sweep interval is unknown.
int refresh_seconds(const Snapshot& s) {
  return s.analysis.interval_seconds > 0
             ? std::clamp(static_cast<int>(std::ceil(s.analysis.interval_seconds)), 5, 300)
             : 30;
}

/// The title and the line of what the node is (type, GUID, LID, tier, rail),
/// and a warning when it stopped answering.
void append_switch_heading(std::string& out, const Snapshot& s, std::size_t node) {
  const FabricNode& fn = s.fabric->nodes[node];
  out += "<h1>";
  append_html(out, s.node_names[node]);
  out += "</h1>\n<p>" + std::string(node_type_name(fn.type)) + ", GUID " + guid_hex(fn.guid) +
         ", LID " + std::to_string(fn.lid);
  if (s.analysis.topology && node < s.analysis.topology->tier.size()) {
    out += ", tier " + std::string(tier_name(s.analysis.topology->tier[node]));
    if (s.analysis.topology->rail[node] != kNoRail)
      out += ", rail " + std::to_string(s.analysis.topology->rail[node]);
  }
  out += ". Sweep of " + utc_time(s.sweep_timestamp_seconds) + ".</p>\n";
  if (node < s.node_status.size() && s.node_status[node].swept && !s.node_status[node].answered) {
    out +=
        "<p><strong>Not answering</strong> PMA queries: the values are those of its last "
        "answer.</p>\n";
  }
}

/// One cell of the port grid: the port's number and stall ratio on its
/// stall colour, a link to the far end's page when it is linked.
void append_port_cell(std::string& out, const Snapshot& s, const PortRow& row, std::size_t i) {
  const FabricPort& fp = *row.port;
  const PortScore* ps = row.score;
  const int x = static_cast<int>(i % kColumns) * (kCellW + kGap);
  const int y = static_cast<int>(i / kColumns) * (kCellH + kGap);
  const bool linked =
      fp.linked() && static_cast<std::size_t>(fp.remote_node) < s.fabric->nodes.size();
  if (linked) {
    out += "<a href=\"/?node=";
    append_url_component(out, s.node_names[static_cast<std::size_t>(fp.remote_node)]);
    out += "\">";
  } else {
    out += "<g>";
  }
  out += "<title>port " + std::to_string(fp.number);
  if (linked) {
    out += " to ";
    append_html(out, far_end_text(s, fp));
  } else {
    out += ", no link";
  }
  if (ps != nullptr) {
    out += stall_tooltip(ps->stall, ps->utilization_valid, ps->utilization);
  }
  out += "</title><rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
         std::to_string(kCellW) + "\" height=\"" + std::to_string(kCellH) + "\" fill=\"" +
         stall_fill(ps != nullptr, ps != nullptr ? ps->stall : 0) + "\"/>";
  const char* ink = ps == nullptr || stall_colour_is_light(ps->stall) ? "#000" : "#fff";
  out += "<text x=\"" + std::to_string(x + kCellW / 2) + "\" y=\"" + std::to_string(y + 16) +
         "\" text-anchor=\"middle\" fill=\"" + ink + "\">" + std::to_string(fp.number) +
         "</text><text x=\"" + std::to_string(x + kCellW / 2) + "\" y=\"" + std::to_string(y + 32) +
         "\" text-anchor=\"middle\" fill=\"" + ink + "\">" +
         (ps != nullptr ? std::to_string(static_cast<int>(std::lround(ps->stall * 100))) + "%"
                        : std::string(linked ? "&ndash;" : "")) +
         "</text>";
  out += linked ? "</a>" : "</g>";
}

/// The ports as a grid of kColumns cells a line, with the stall legend.
void append_port_grid(std::string& out, const Snapshot& s, const std::vector<PortRow>& rows) {
  const int lines = (static_cast<int>(rows.size()) + kColumns - 1) / kColumns;
  const int columns = std::min<int>(kColumns, static_cast<int>(rows.size()));
  out += "<svg id=\"ports-svg\" width=\"" + std::to_string(columns * (kCellW + kGap)) +
         "\" height=\"" + std::to_string(lines * (kCellH + kGap)) +
         "\" role=\"img\" aria-label=\"ports by stall ratio\">";
  for (std::size_t i = 0; i < rows.size(); ++i) append_port_cell(out, s, rows[i], i);
  out += "</svg>\n";
  append_stall_legend(out);
}

/// Each port's cable health (issue #34, the Links table of the fabric
/// page): its condition and the symbol BER into this port, by port index.
std::map<std::int32_t, std::string> link_health_by_port(const Snapshot& s, std::size_t node) {
  std::map<std::int32_t, std::string> link_health;
  for (const LinkReport& l : s.links->links) {
    for (const auto& [end, into] : {std::pair{&l.a, &l.into_a}, std::pair{&l.b, &l.into_b}}) {
      if (end->node != static_cast<std::int32_t>(node)) continue;
      std::string text(link_condition_name(l.condition));
      if (into->symbol_ber >= 0) {
        char ber[24];
        std::snprintf(ber, sizeof ber, "%.1e", into->symbol_ber);
        text += std::string(", BER in ") + (into->at_least ? "&ge;" : "") + ber;
      }
      // Plain text from numbers and the fixed vocabulary of link_peers.h.
      if (l.has(LinkCondition::kDegraded)) {
        text += (l.condition == LinkCondition::kDegraded ? ": " : "; degraded: ") +
                link_degraded_reason(*s.fabric, l);
      }
      link_health[end->port_index] = std::move(text);
    }
  }
  return link_health;
}

/// One row of the port table: state, width, speed, W, U, the far end (a
/// link to its page) and the cable's health.
void append_port_table_row(std::string& out, const Snapshot& s, std::size_t node, const PortRow& r,
                           const std::map<std::int32_t, std::string>& link_health) {
  const Fabric& f = *s.fabric;
  const FabricPort& fp = *r.port;
  out += "<tr><td class=\"n\">" + std::to_string(fp.number) + "</td><td>" +
         std::string(port_state_name(fp.state)) + "</td><td>" +
         std::string(link_width_name(fp.width_active)) + "</td><td>" +
         std::string(link_speed_name(fp)) + "</td><td class=\"n\">" +
         (r.score != nullptr ? fixed(r.score->stall, 3) : std::string("&ndash;")) +
         "</td><td class=\"n\">" +
         (r.score != nullptr && r.score->utilization_valid ? fixed(r.score->utilization, 3)
                                                           : std::string("&ndash;")) +
         "</td><td>";
  if (fp.linked() && static_cast<std::size_t>(fp.remote_node) < f.nodes.size()) {
    const std::string& remote = s.node_names[static_cast<std::size_t>(fp.remote_node)];
    out += "<a href=\"/?node=";
    append_url_component(out, remote);
    out += "\">";
    append_html(out, remote);
    out += "</a> port " + std::to_string(fp.remote_port);
  } else {
    out += "&ndash;";
  }
  const auto health =
      link_health.find(static_cast<std::int32_t>(r.port - f.nodes[node].ports.data()));
  out += "</td><td>" +
         (health != link_health.end() ? health->second : std::string(fp.linked() ? "ok" : "")) +
         "</td></tr>\n";
}

void append_port_table(std::string& out, const Snapshot& s, std::size_t node,
                       const std::vector<PortRow>& rows) {
  out +=
      "<table id=\"ports\"><thead><tr><th>Port</th><th>State</th><th>Width</th><th>Speed</th>"
      "<th>W</th><th>U</th><th>Far end</th><th>Link</th></tr></thead><tbody>\n";
  const std::map<std::int32_t, std::string> link_health = link_health_by_port(s, node);
  for (const PortRow& r : rows) append_port_table_row(out, s, node, r, link_health);
  out += "</tbody></table>\n";
}

}  // namespace

std::optional<std::size_t> find_node_named(const Snapshot& s, std::string_view name) {
  if (!s.fabric || name.empty()) return std::nullopt;
  const Fabric& f = *s.fabric;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    if ((n < s.node_names.size() && s.node_names[n] == name) || f.nodes[n].description == name ||
        guid_hex(f.nodes[n].guid) == name) {
      return n;
    }
  }
  return std::nullopt;
}

std::string render_switch_html(const Snapshot& s, std::size_t node,
                               std::string_view telemetry_path) {
  const std::vector<PortRow> rows = port_rows(s, node);
  std::string out;
  append_page_start(out, valid_utf8(s.node_names[node]) + " - InfiniBand fabric status",
                    telemetry_path, refresh_seconds(s));
  append_switch_heading(out, s, node);
  append_port_grid(out, s, rows);
  append_port_table(out, s, node, rows);
  append_page_end(out);
  return out;
}

std::string render_unknown_node_html(std::string_view name, std::string_view telemetry_path) {
  std::string out;
  append_page_start(out, "Unknown node - InfiniBand fabric status", telemetry_path, 30);
  out += "<h1>Unknown node</h1>\n<p>No node of the last sweep is named &ldquo;";
  append_html(out, name);
  out += "&rdquo; (a node name, NodeDescription or GUID such as 0x0002c90300a1b2c3).</p>\n";
  append_page_end(out);
  return out;
}

}  // namespace ibfx
