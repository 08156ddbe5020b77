#include "views/history_heatmap.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <vector>

#include "views/status_page_frame.h"
#include "views/web_escape.h"

namespace ibfx {
namespace {

constexpr int kRowLabel = 130;
constexpr int kTimeCellW = 12;
constexpr int kTimeCellH = 16;
constexpr int kAxis = 16;

// One row of the time heatmap: a switch, or a group of them.
struct Row {
  std::string label;
  std::vector<std::size_t> switches;  // indices into StatusModel::switches
};

// The worst of a row over one column.
struct Cell {
  std::uint16_t stall = kHistoryNoRatio;
  std::uint16_t utilization = kHistoryNoRatio;
  std::size_t worst = 0;  // StatusModel::switches index
  std::uint8_t port = 0;
  bool root = false;
};

std::vector<Row> rows_of(const StatusModel& m) {
  std::vector<Row> rows;
  if (m.switches.size() <= kHistorySwitchRows) {
    for (const StatusRow& r : m.rows) {
      for (const std::size_t s : r.switches) rows.push_back(Row{m.switches[s].name, {s}});
    }
  } else {
    for (const StatusRow& r : m.rows) rows.push_back(Row{r.label, r.switches});
  }
  return rows;
}

// "12-03 02:13" of a Unix time: short enough for a tooltip per cell.
std::string short_time(double t) {
  const std::string full = utc_time(t);  // "2026-12-03 02:13:00 UTC"
  return full.size() >= 16 ? full.substr(5, 11) : full;
}

// A cell's time: "02:13" (UTC) within a day, "12-03 02:13" over longer
// windows, "02:13:05" when columns are shorter than a minute (or they
// would share one time). Short: it is in every tooltip.
std::string tooltip_time(double t, double window) {
  if (window < 3600) {
    const std::string full = utc_time(t);  // "2026-12-03 02:13:05 UTC"
    return full.size() >= 19 ? full.substr(11, 8) : full;
  }
  const std::string s = short_time(t);
  return window < 86400 ? s.substr(6) : s;
}

std::string window_name(double seconds) {
  if (seconds >= 86400 && std::fmod(seconds, 86400) == 0) {
    return std::to_string(static_cast<long long>(seconds / 86400)) + "d";
  }
  if (seconds >= 3600 && std::fmod(seconds, 3600) == 0) {
    return std::to_string(static_cast<long long>(seconds / 3600)) + "h";
  }
  if (seconds >= 60) return std::to_string(static_cast<long long>(seconds / 60)) + "m";
  return std::to_string(static_cast<long long>(seconds)) + "s";
}

// The heatmap's kHistoryColumns time columns.
struct TimeColumns {
  double window = 0;  // seconds the heatmap spans
  double step = 0;    // seconds a column spans
  double first = 0;   // start of the first column
  double end = 0;     // the newest time shown
};

TimeColumns time_columns(const StatusModel& m) {
  const auto& frames = m.history->frames;
  TimeColumns t;
  t.window = m.history_window_seconds;
  t.step = t.window / kHistoryColumns;
  t.end = frames.back()->time + frames.back()->span;
  // A page of the past shows the window around its time.
  if (m.as_of && m.as_of->time < t.end - t.window) {
    t.end = std::min(t.end, m.as_of->time + t.window / 2);
  }
  // Columns aligned to the step, so that a column means the same minutes
  // from one reload to the next.
  t.first = (std::floor(t.end / t.step) - (kHistoryColumns - 1)) * t.step;
  return t;
}

// The column a time falls in, the first or last one for times outside.
int column_of(const TimeColumns& t, double time) {
  return std::clamp(static_cast<int>(std::floor((time - t.first) / t.step)), 0,
                    kHistoryColumns - 1);
}

// The worst of each row over each column (row-major), and which columns
// any frame fell in.
struct Grid {
  std::vector<Cell> cells;
  std::vector<bool> filled;
};

// Each model switch's row, -1 for none.
std::vector<int> row_of_switch(const StatusModel& m, const std::vector<Row>& rows) {
  std::vector<int> row_of(m.switches.size(), -1);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (const std::size_t s : rows[r].switches) row_of[s] = static_cast<int>(r);
  }
  return row_of;
}

// A frame's switch table -> the model's switch indices, -1 for a switch
// the model no longer has.
std::vector<int> model_indices(const HistorySwitchTable& table,
                               const std::unordered_map<std::uint64_t, std::size_t>& by_guid) {
  std::vector<int> to_model(table.switches.size(), -1);
  for (std::size_t i = 0; i < table.switches.size(); ++i) {
    const auto g = by_guid.find(table.switches[i].guid);
    if (g != by_guid.end()) to_model[i] = static_cast<int>(g->second);
  }
  return to_model;
}

// A frame's cells into its column: a cell keeps the worst W and its switch
// and port, and is a root when any of its switches was one.
void merge_frame(const HistoryFrame& f, const std::vector<int>& to_model,
                 const std::vector<int>& row_of, int col, Grid& grid) {
  for (std::size_t i = 0; i < f.cells.size() && i < to_model.size(); ++i) {
    const HistoryCell& c = f.cells[i];
    if (to_model[i] < 0) continue;
    const auto s = static_cast<std::size_t>(to_model[i]);
    if (row_of[s] < 0) continue;
    Cell& cell = grid.cells[static_cast<std::size_t>(row_of[s]) * kHistoryColumns +
                            static_cast<std::size_t>(col)];
    cell.root = cell.root || (c.flags & HistoryCell::kRoot) != 0;
    if (c.stall == kHistoryNoRatio) continue;
    if (cell.stall != kHistoryNoRatio && c.stall <= cell.stall) continue;
    cell.stall = c.stall;
    cell.utilization = c.utilization;
    cell.worst = s;
    cell.port = c.port;
  }
}

Grid fill_grid(const StatusModel& m, const std::vector<Row>& rows, const TimeColumns& t) {
  std::unordered_map<std::uint64_t, std::size_t> by_guid;
  for (std::size_t i = 0; i < m.switches.size(); ++i) by_guid.emplace(m.switches[i].guid, i);
  const std::vector<int> row_of = row_of_switch(m, rows);
  // A frame's switch table -> the model's switch indices (a handful of
  // tables at most: one per discovery that changed the fabric).
  std::map<const HistorySwitchTable*, std::vector<int>> mapping;
  Grid grid{std::vector<Cell>(rows.size() * kHistoryColumns),
            std::vector<bool>(kHistoryColumns, false)};
  for (const HistoryFramePtr& f : m.history->frames) {
    if (f->time + f->span < t.first || f->time > t.end) continue;
    const int col = column_of(t, f->time);
    grid.filled[static_cast<std::size_t>(col)] = true;
    auto [it, inserted] = mapping.try_emplace(f->table.get());
    if (inserted) it->second = model_indices(*f->table, by_guid);
    merge_frame(*f, it->second, row_of, col, grid);
  }
  return grid;
}

void append_window_links(std::string& out) {
  out += "<h2 id=\"history\">Heatmap of pain over time</h2>\n<p>Window:";
  for (const char* w : {"5m", "1h", "6h", "24h"}) {
    out += std::string(" <a href=\"/?window=") + w + "\">" + w + "</a>";
  }
  out += "</p>\n";
}

// What a column and a row are, and what selecting a column does.
void append_heatmap_legend(std::string& out, const StatusModel& m, double step) {
  out += "<p>Each column is " + window_name(step) +
         " (the worst W of its sweeps), newest right; a row is ";
  out += m.switches.size() <= kHistorySwitchRows
             ? "a switch. "
             : "a rail's leaves, the spines or the cores (the tooltip names the worst switch). ";
  out +=
      "Select a column for the page as it was then; a red outline marks a root of "
      "congestion.</p>\n";
}

// The svg element, the time axis (a label every 10 columns) and the row
// labels.
void append_heatmap_axes(std::string& out, const std::vector<Row>& rows, const TimeColumns& t) {
  const int width = kRowLabel + kHistoryColumns * kTimeCellW + 4;
  const int height = kAxis + static_cast<int>(rows.size()) * (kTimeCellH + 1) + 4;
  out += "<svg id=\"history-svg\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) +
         "\" role=\"img\" aria-label=\"heatmap of stall ratios over time\">";
  for (int c = 0; c < kHistoryColumns; c += 10) {
    out += "<text x=\"" + std::to_string(kRowLabel + c * kTimeCellW) +
           "\" y=\"12\" fill=\"#666\">" +
           tooltip_time(t.first + c * t.step, std::min(t.window, 3600.0)) + "</text>";
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out += "<text x=\"0\" y=\"" +
           std::to_string(kAxis + static_cast<int>(r) * (kTimeCellH + 1) + 12) + "\">";
    append_html(out, rows[r].label);
    out += "</text>";
  }
}

// One cell: its stall colour, and a tooltip naming the worst switch and
// port of the row in that column.
void append_heatmap_cell(std::string& out, const StatusModel& m, const Row& row, const Cell& cell,
                         std::size_t r, double t0, double window) {
  const int y = kAxis + static_cast<int>(r) * (kTimeCellH + 1);
  const bool known = cell.stall != kHistoryNoRatio;
  const double w = known ? ratio_value(cell.stall) : 0;
  out += "<rect y=\"" + std::to_string(y) + "\" fill=\"" + stall_fill(known, w) +
         (cell.root ? "\" class=\"r\"><title>" : "\"><title>");
  out += tooltip_time(t0, window);
  out += ", ";
  if (known) {
    append_html(out, m.switches[cell.worst].name);
    out += " port " + std::to_string(cell.port) +
           stall_tooltip(w, cell.utilization != kHistoryNoRatio, ratio_value(cell.utilization));
  } else {
    append_html(out, row.label);
    out += ", no data";
  }
  if (cell.root) out += ", root of congestion";
  out += "</title></rect>";
}

// The columns any frame fell in, each a link to the page as it was.
void append_heatmap_columns(std::string& out, const StatusModel& m, const std::vector<Row>& rows,
                            const Grid& grid, const TimeColumns& t) {
  for (int c = 0; c < kHistoryColumns; ++c) {
    if (!grid.filled[static_cast<std::size_t>(c)]) continue;
    const double t0 = t.first + c * t.step;
    const int x = kRowLabel + c * kTimeCellW;
    // The column links to the page as it was at its end (the last sweep in
    // it); its cells are placed by the group's offset, not one x each.
    out += "<a href=\"/?at=" + std::to_string(static_cast<long long>(std::ceil(t0 + t.step - 1))) +
           "\"><g transform=\"translate(" + std::to_string(x) + ")\">";
    for (std::size_t r = 0; r < rows.size(); ++r) {
      append_heatmap_cell(out, m, rows[r],
                          grid.cells[r * kHistoryColumns + static_cast<std::size_t>(c)], r, t0,
                          t.window);
    }
    out += "</g></a>";
  }
}

// A page of the past outlines the column of its time.
void append_as_of_column(std::string& out, const StatusModel& m, std::size_t row_count,
                         const TimeColumns& t) {
  if (!m.as_of || m.as_of->time < t.first || m.as_of->time > t.end) return;
  const int c = column_of(t, m.as_of->time);
  out += "<rect class=\"at\" x=\"" + std::to_string(kRowLabel + c * kTimeCellW) + "\" y=\"" +
         std::to_string(kAxis) +
         "\" style=\"height:" + std::to_string(static_cast<int>(row_count) * (kTimeCellH + 1)) +
         "px\"/>";
}

}  // namespace

std::string history_heatmap_style() {
  return "#history-svg rect{width:" + std::to_string(kTimeCellW) +
         "px;height:" + std::to_string(kTimeCellH) +
         "px}#history-svg rect.r{stroke:#e8000b;stroke-width:2px}"
         "#history-svg rect.at{fill:none;stroke:#000;stroke-width:2px}"
         ".asof{background:#fff3cd;border:1px solid #c9a227;padding:6px}"
         ".spark polyline{fill:none;stroke:#e8000b;stroke-width:1.5px}";
}

void append_as_of_banner(std::string& out, const StatusModel& m) {
  if (!m.as_of) return;
  const StatusAsOf& a = *m.as_of;
  out += "<p class=\"asof\" id=\"as-of\">From the history: the fabric as it was at " +
         utc_time(a.time);
  if (a.span > 0) {
    out += " (the worst of " + std::to_string(a.sweeps) + " sweeps over " + fixed(a.span, 0) +
           " s: beyond the recent window the history keeps one frame per step)";
  }
  if (a.newest && a.requested > a.time + a.span) {
    out += ", the newest sweep: none is later (asked for " + utc_time(a.requested) + ")";
  } else {
    out += ", the sweep nearest before " + utc_time(a.requested);
  }
  out +=
      ". Ports and far ends are not kept: the hottest ports are each switch's worst; the "
      "links are the unhealthy ones the page listed (a link down or degraded among them). "
      "<a href=\"/\">Back to now</a>.</p>\n";
}

void append_history_heatmap(std::string& out, const StatusModel& m) {
  append_window_links(out);
  if (!m.history || m.history->frames.empty() || m.switches.empty()) {
    out += "<p class=\"muted\">No history yet.</p>\n";
    return;
  }
  const TimeColumns t = time_columns(m);
  const std::vector<Row> rows = rows_of(m);
  const Grid grid = fill_grid(m, rows, t);
  append_heatmap_legend(out, m, t.step);
  append_heatmap_axes(out, rows, t);
  append_heatmap_columns(out, m, rows, grid, t);
  append_as_of_column(out, m, rows.size(), t);
  out += "</svg>\n";
}

}  // namespace ibfx
