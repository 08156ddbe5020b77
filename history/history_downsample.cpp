#include "history/history_downsample.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

namespace ibfx {
namespace {

// Unknown (kHistoryNoRatio) ranks below every value.
int stall_rank(const HistoryCell& c) { return c.stall == kHistoryNoRatio ? -1 : c.stall; }

HistoryCell worse(const HistoryCell& a, const HistoryCell& b) {
  HistoryCell w = stall_rank(b) > stall_rank(a) ? b : a;
  w.flags = a.flags | b.flags;
  return w;
}

std::vector<PageRoot> merged_roots(const std::vector<PageRoot>& a, const std::vector<PageRoot>& b) {
  std::map<std::pair<std::uint64_t, int>, PageRoot> by_port;
  for (const auto* list : {&a, &b}) {
    for (const PageRoot& r : *list) {
      auto [it, inserted] = by_port.try_emplace({r.guid, r.port}, r);
      if (inserted) continue;
      // The worst sweep's root, with every job that fed it in the bucket.
      std::vector<std::string> sending = std::move(it->second.sending_jobs);
      if (r.score > it->second.score) it->second = r;
      add_missing_jobs(sending, r.sending_jobs);
      it->second.sending_jobs = std::move(sending);
    }
  }
  std::vector<PageRoot> out;
  out.reserve(by_port.size());
  for (auto& [key, r] : by_port) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(),
                   [](const PageRoot& x, const PageRoot& y) { return x.score > y.score; });
  if (out.size() > kHistoryMaxRoots) out.resize(kHistoryMaxRoots);
  return out;
}

// Job switch indices refer to a table: the bucket's are remapped by GUID.
std::vector<HistoryJob> merged_jobs(const HistoryFrame& bucket, const HistoryFrame& frame) {
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  for (std::size_t i = 0; i < frame.table->switches.size(); ++i) {
    index.emplace(frame.table->switches[i].guid, static_cast<std::uint32_t>(i));
  }
  std::map<std::uint64_t, HistoryJob> by_id;
  for (const HistoryJob& j : frame.jobs) by_id.emplace(j.id, j);
  for (const HistoryJob& old : bucket.jobs) {
    std::vector<std::uint32_t> switches;
    for (const std::uint32_t s : old.switches) {
      if (s >= bucket.table->switches.size()) continue;
      const auto it = index.find(bucket.table->switches[s].guid);
      if (it != index.end()) switches.push_back(it->second);
    }
    auto [it, inserted] = by_id.try_emplace(old.id, old);
    HistoryJob& j = it->second;
    if (inserted) {
      j.switches = std::move(switches);
    } else {
      j.stall_max = std::max(j.stall_max, old.stall_max);
      j.switches.insert(j.switches.end(), switches.begin(), switches.end());
      std::sort(j.switches.begin(), j.switches.end());
      j.switches.erase(std::unique(j.switches.begin(), j.switches.end()), j.switches.end());
    }
  }
  std::vector<HistoryJob> out;
  out.reserve(by_id.size());
  for (auto& [id, j] : by_id) out.push_back(std::move(j));
  std::stable_sort(out.begin(), out.end(), [](const HistoryJob& x, const HistoryJob& y) {
    return x.stall_max > y.stall_max;
  });
  if (out.size() > kHistoryMaxJobs) out.resize(kHistoryMaxJobs);
  return out;
}

// The links unhealthy in either: the newer frame's first (its order, worst
// first), then the bucket's others; a link in both keeps its newer state
// and the earlier start.
std::vector<PageLink> merged_links(const std::vector<PageLink>& older,
                                   const std::vector<PageLink>& newer) {
  std::vector<PageLink> out = newer;
  for (const PageLink& l : older) {
    const auto same = std::find_if(out.begin(), out.end(), [&l](const PageLink& n) {
      return n.node.guid == l.node.guid && n.node.port == l.node.port;
    });
    if (same != out.end()) {
      same->since = std::min(same->since, l.since);
      same->downs_last_hour = std::max(same->downs_last_hour, l.downs_last_hour);
      // The jobs of either: the job view finds the link in the step.
      if (l.jobs) {
        if (!same->jobs) same->jobs.emplace();
        add_missing_jobs(*same->jobs, *l.jobs);
      }
    } else if (out.size() < kHistoryMaxLinks) {
      out.push_back(l);
    }
  }
  return out;
}

PageSweep worst_sweep(const PageSweep& a, const PageSweep& b) {
  PageSweep w = b.nodes_answering < a.nodes_answering ? b : a;
  w.duration_seconds = std::max(a.duration_seconds, b.duration_seconds);
  w.completed = a.completed && b.completed;
  w.scored = a.scored || b.scored;
  return w;
}

}  // namespace

std::vector<HistoryCell> history_cells_as(const HistoryFrame& bucket,
                                          const HistorySwitchTable& table) {
  if (bucket.table->switches.size() == table.switches.size() &&
      std::equal(bucket.table->switches.begin(), bucket.table->switches.end(),
                 table.switches.begin(),
                 [](const HistorySwitch& a, const HistorySwitch& b) { return a.guid == b.guid; })) {
    return bucket.cells;
  }
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < bucket.table->switches.size(); ++i) {
    index.emplace(bucket.table->switches[i].guid, i);
  }
  std::vector<HistoryCell> out(table.switches.size());
  for (std::size_t i = 0; i < table.switches.size(); ++i) {
    const auto it = index.find(table.switches[i].guid);
    if (it != index.end() && it->second < bucket.cells.size()) out[i] = bucket.cells[it->second];
  }
  return out;
}

double history_step_start(double time, double step) {
  if (step <= 0) return time;
  return std::floor(time / step) * step;
}

HistoryFramePtr fold_into_step(const HistoryFrame* bucket, const HistoryFrame& frame, double step) {
  auto out = std::make_shared<HistoryFrame>(frame);
  out->time = history_step_start(frame.time, step);
  out->span = step;
  if (bucket == nullptr) return out;
  const std::vector<HistoryCell> old = history_cells_as(*bucket, *frame.table);
  for (std::size_t i = 0; i < out->cells.size() && i < old.size(); ++i) {
    out->cells[i] = worse(old[i], out->cells[i]);
  }
  out->roots = merged_roots(bucket->roots, frame.roots);
  out->jobs = merged_jobs(*bucket, frame);
  out->links = merged_links(bucket->links, frame.links);
  out->links_total = std::max(bucket->links_total, frame.links_total);
  out->sweep = worst_sweep(bucket->sweep, frame.sweep);
  out->sweeps = bucket->sweeps + frame.sweeps;
  return out;
}

}  // namespace ibfx
