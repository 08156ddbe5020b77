#include "views/history_capture.h"

#include <algorithm>
#include <unordered_map>

namespace ibfx {
namespace {

std::shared_ptr<const HistorySwitchTable> switch_table(
    const StatusModel& model, const std::shared_ptr<const HistorySwitchTable>& previous) {
  auto table = std::make_shared<HistorySwitchTable>();
  table->switches.reserve(model.switches.size());
  for (const StatusSwitch& s : model.switches) {
    table->switches.push_back(HistorySwitch{s.guid, s.name, s.tier, s.rail, s.unit});
  }
  if (previous && previous->switches == table->switches) return previous;
  return table;
}

std::vector<HistoryJob> frame_jobs(const Snapshot& snapshot, const StatusModel& model) {
  std::vector<HistoryJob> jobs;
  if (!snapshot.jobs.enabled) return jobs;
  std::unordered_map<std::size_t, std::uint32_t> switch_of_node;
  for (std::size_t i = 0; i < model.switches.size(); ++i) {
    switch_of_node.emplace(model.switches[i].node, static_cast<std::uint32_t>(i));
  }
  const auto& ports = snapshot.analysis.result.ports;
  for (const JobPorts& j : snapshot.jobs.join.jobs) {
    HistoryJob h{j.job_id, j.name, j.user, j.stall_ratio_max, {}};
    for (const std::size_t p : j.ports) {
      if (p >= ports.size() || ports[p].node < 0) continue;
      const auto it = switch_of_node.find(static_cast<std::size_t>(ports[p].node));
      if (it != switch_of_node.end()) h.switches.push_back(it->second);
    }
    std::sort(h.switches.begin(), h.switches.end());
    h.switches.erase(std::unique(h.switches.begin(), h.switches.end()), h.switches.end());
    jobs.push_back(std::move(h));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const HistoryJob& a, const HistoryJob& b) {
    return a.stall_max > b.stall_max;
  });
  if (jobs.size() > kHistoryMaxJobs) jobs.resize(kHistoryMaxJobs);
  return jobs;
}

// What the history keeps of a live row: its page part, as it is. A link's
// fabric indices are dropped (the frame outlives the fabric they index),
// its downs bounded as the state file reads them.
PageLink kept_link(const StatusLinkHealth& l) {
  PageLink kept = static_cast<const PageLink&>(l);
  kept.node.node = kNoNode;
  kept.remote.node = kNoNode;
  kept.downs_last_hour = std::min(kept.downs_last_hour, kHistoryMaxDownsLastHour);
  return kept;
}

}  // namespace

HistoryFramePtr make_history_frame(const StatusModel& model, const Snapshot& snapshot,
                                   const std::shared_ptr<const HistorySwitchTable>& previous) {
  auto frame = std::make_shared<HistoryFrame>();
  frame->time = model.sweep.timestamp_seconds;
  frame->table = switch_table(model, previous);
  frame->cells.reserve(model.switches.size());
  for (const StatusSwitch& s : model.switches) {
    HistoryCell c;
    if (s.valid) c.stall = quantize_ratio(s.stall);
    if (s.valid && s.utilization_valid) c.utilization = quantize_ratio(s.utilization);
    c.port = static_cast<std::uint8_t>(std::clamp(s.worst_port, 0, 255));
    if (s.root) c.flags |= HistoryCell::kRoot;
    if (!s.answering) c.flags |= HistoryCell::kNotAnswering;
    frame->cells.push_back(c);
  }
  for (const StatusRoot& r : model.roots) {
    if (frame->roots.size() == kHistoryMaxRoots) break;
    frame->roots.push_back(static_cast<const PageRoot&>(r));
  }
  frame->jobs = frame_jobs(snapshot, model);
  for (const StatusLinkHealth& l : model.links) {
    if (frame->links.size() == kHistoryMaxLinks) break;
    frame->links.push_back(kept_link(l));
  }
  frame->links_total = static_cast<std::uint32_t>(model.links_total);
  frame->sweep = static_cast<const PageSweep&>(model.sweep);
  return frame;
}

}  // namespace ibfx
