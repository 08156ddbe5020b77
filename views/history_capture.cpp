#include "views/history_capture.h"

#include <algorithm>
#include <optional>
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

std::optional<float> ber_of(const std::optional<double>& ber) {
  if (!ber) return std::nullopt;
  return static_cast<float>(*ber);
}

HistoryLink history_link(const StatusLinkHealth& l) {
  HistoryLink h;
  h.guid = l.node.guid;
  h.name = l.node.name;
  h.port = static_cast<std::uint8_t>(std::clamp(l.node.port, 0, 255));
  h.remote_guid = l.remote.guid;
  h.remote_name = l.remote.name;
  h.remote_port = static_cast<std::uint8_t>(std::clamp(l.remote.port, 0, 255));
  h.remote_read = l.remote.read;
  h.condition = l.condition;
  h.since = l.since;
  h.symbol_ber = ber_of(l.symbol_ber);
  h.symbol_ber_at_least = l.symbol_ber_at_least;
  h.remote_symbol_ber = ber_of(l.remote_symbol_ber);
  h.downs_last_hour = static_cast<std::uint16_t>(std::min<std::uint32_t>(l.downs_last_hour, 65535));
  h.jobs_known = l.jobs.has_value();
  if (l.jobs) h.jobs = *l.jobs;
  return h;
}

}  // namespace

HistoryRoot history_root(const StatusRoot& r) {
  HistoryRoot h;
  h.guid = r.guid;
  h.name = r.name;
  h.port = r.port;
  h.tier = r.tier;
  h.cause = r.cause;
  h.score = r.score;
  h.victims = static_cast<std::uint32_t>(r.victims);
  h.stall = r.stall;
  h.utilization = r.utilization;
  h.remote_guid = r.remote.guid;
  h.remote_name = r.remote.name;
  h.remote_port = r.remote.port;
  h.jobs_known = r.jobs.has_value();
  if (r.jobs) h.jobs = *r.jobs;
  for (const StatusSender& s : r.senders) {
    if (!s.jobs) continue;
    for (const std::string& job : *s.jobs) {
      if (std::find(h.sending_jobs.begin(), h.sending_jobs.end(), job) == h.sending_jobs.end()) {
        h.sending_jobs.push_back(job);
      }
    }
  }
  return h;
}

StatusRoot status_root(const HistoryRoot& r) {
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
  return out;
}

HistorySweep history_sweep(const StatusSweep& s) {
  return HistorySweep{s.duration_seconds,
                      s.interval_seconds,
                      s.completed,
                      s.scored,
                      static_cast<std::uint32_t>(s.nodes),
                      static_cast<std::uint32_t>(s.nodes_swept),
                      static_cast<std::uint32_t>(s.nodes_answering),
                      static_cast<std::uint32_t>(s.ports),
                      static_cast<std::uint32_t>(s.ports_read)};
}

StatusSweep status_sweep(const HistorySweep& s, double timestamp_seconds) {
  StatusSweep w;
  w.timestamp_seconds = timestamp_seconds;
  w.duration_seconds = s.duration_seconds;
  w.interval_seconds = s.interval_seconds;
  w.completed = s.completed;
  w.scored = s.scored;
  w.nodes = s.nodes;
  w.nodes_swept = s.nodes_swept;
  w.nodes_answering = s.nodes_answering;
  w.ports = s.ports;
  w.ports_read = s.ports_read;
  return w;
}

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
    frame->roots.push_back(history_root(r));
  }
  frame->jobs = frame_jobs(snapshot, model);
  for (const StatusLinkHealth& l : model.links) {
    if (frame->links.size() == kHistoryMaxLinks) break;
    frame->links.push_back(history_link(l));
  }
  frame->links_total = static_cast<std::uint32_t>(model.links_total);
  frame->sweep = history_sweep(model.sweep);
  return frame;
}

}  // namespace ibfx
