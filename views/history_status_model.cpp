#include "views/history_status_model.h"

#include <algorithm>
#include <cmath>

namespace ibfx {

StatusModel history_status_model(const HistoryFrame& frame, double requested,
                                 const EventList* events) {
  StatusModel m;
  m.as_of = StatusAsOf{requested, frame.time, frame.span, frame.sweeps};
  StatusSweep& w = m.sweep;
  w.timestamp_seconds = frame.time;
  w.duration_seconds = frame.sweep.duration_seconds;
  w.interval_seconds = frame.sweep.interval_seconds;
  w.completed = frame.sweep.completed;
  w.scored = frame.sweep.scored;
  w.nodes = frame.sweep.nodes;
  w.nodes_swept = frame.sweep.nodes_swept;
  w.nodes_answering = frame.sweep.nodes_answering;
  w.ports = frame.sweep.ports;
  w.ports_read = frame.sweep.ports_read;

  const auto& table = frame.table->switches;
  for (std::size_t i = 0; i < table.size() && i < frame.cells.size(); ++i) {
    const HistoryCell& c = frame.cells[i];
    StatusSwitch sw;
    sw.node = i;  // no fabric behind a past page: its place in the frame
    sw.guid = table[i].guid;
    sw.name = table[i].name;
    sw.tier = table[i].tier;
    sw.rail = table[i].rail;
    sw.valid = c.stall != kHistoryNoRatio;
    sw.stall = sw.valid ? ratio_value(c.stall) : 0;
    sw.utilization_valid = c.utilization != kHistoryNoRatio;
    sw.utilization = sw.utilization_valid ? ratio_value(c.utilization) : 0;
    sw.worst_port = c.port;
    sw.answering = (c.flags & HistoryCell::kNotAnswering) == 0;
    sw.root = (c.flags & HistoryCell::kRoot) != 0;
    m.switches.push_back(std::move(sw));
    if (!m.switches.back().answering && m.not_answering.size() < kStatusMaxRows) {
      m.not_answering.push_back(StatusNode{table[i].guid, table[i].name, "switch", true});
    }
    if (!m.switches.back().answering) ++m.not_answering_total;
  }
  lay_out_status_rows(m);

  for (const HistoryRoot& r : frame.roots) {
    StatusRoot out;
    out.guid = r.guid;
    out.name = r.name;
    out.port = r.port;
    out.tier = r.tier;
    out.cause = r.cause;
    out.score = r.score;
    out.victims = r.victims;
    out.stall = r.stall;
    out.utilization = r.utilization;
    out.remote = StatusFarEnd{r.remote_guid, r.remote_name, r.remote_port};
    if (r.jobs_known) out.jobs = r.jobs;
    m.roots.push_back(std::move(out));
  }

  // The hottest ports the history knows: each switch's worst.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < m.switches.size(); ++i) {
    if (m.switches[i].valid && m.switches[i].worst_port > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return m.switches[a].stall > m.switches[b].stall;
  });
  if (order.size() > kStatusHottestRows) order.resize(kStatusHottestRows);
  for (const std::size_t i : order) {
    const StatusSwitch& sw = m.switches[i];
    m.hottest.push_back(StatusPort{sw.guid, sw.name, sw.worst_port, sw.tier, sw.stall,
                                   sw.utilization_valid, sw.utilization, StatusFarEnd{}});
  }

  if (events != nullptr) {
    // Congested during the frame: started before its end, not ended before its start.
    const double until = frame.time + std::max(frame.span, 0.0);
    std::vector<StatusEvent> rows;
    for (const CongestionEvent& e : *events) {
      if (e.start > until || (e.end && *e.end < frame.time)) continue;
      if (rows.size() >= kStatusMaxRows) break;
      rows.push_back(status_event(e));
    }
    m.events = std::move(rows);
  }
  return m;
}

}  // namespace ibfx
