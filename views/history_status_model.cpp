#include "views/history_status_model.h"

#include <algorithm>
#include <cmath>

namespace ibfx {

StatusModel history_status_model(const HistoryFrame& frame, double requested,
                                 const EventList* events) {
  StatusModel m;
  m.as_of = StatusAsOf{requested, frame.time, frame.span, frame.sweeps, false};
  static_cast<PageSweep&>(m.sweep) = frame.sweep;
  m.sweep.timestamp_seconds = frame.time;

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

  // The roots and unhealthy links as the page listed them: the page's rows
  // (what only the live page has, a root's senders, a link's width, speed
  // and rates, is not kept: the tables here do not show it).
  for (const PageRoot& r : frame.roots) {
    StatusRoot live;
    static_cast<PageRoot&>(live) = r;
    m.roots.push_back(std::move(live));
  }
  for (const PageLink& l : frame.links) {
    StatusLinkHealth live;
    static_cast<PageLink&>(live) = l;
    live.conditions = {l.condition};
    m.links.push_back(std::move(live));
  }
  m.links_total = std::max<std::size_t>(frame.links_total, m.links.size());

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
