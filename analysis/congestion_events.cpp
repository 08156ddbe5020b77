#include "analysis/congestion_events.h"

#include <algorithm>
#include <unordered_map>

namespace ibfx {

// What one sweep's forest says of one of its roots.
struct CongestionEventTracker::TreeSeen {
  const CongestionRoot* root = nullptr;
  std::int32_t node = kNoNode;
  const FabricPort* port = nullptr;
  std::vector<int> rails;            // ascending, unique
  std::vector<std::int32_t> leaves;  // node indices, unique, in port order
};

// The sweep observe() is given, as its steps read it.
struct CongestionEventTracker::SweepSeen {
  const CongestionForest* forest = nullptr;
  const Fabric* fabric = nullptr;
  const std::vector<std::string>* node_names = nullptr;
  double now = 0;
  double interval = 0;
  const std::vector<std::vector<std::uint64_t>>* root_jobs = nullptr;
  const std::vector<std::vector<EventSender>>* root_senders = nullptr;
};

namespace {

EventNode event_node(const Fabric& fabric, const std::vector<std::string>& names,
                     std::int32_t node) {
  if (node < 0 || static_cast<std::size_t>(node) >= fabric.nodes.size()) return {};
  const auto n = static_cast<std::size_t>(node);
  const std::string& name =
      n < names.size() && !names[n].empty() ? names[n] : fabric.nodes[n].description;
  return EventNode{fabric.nodes[n].guid, name};
}

void add_rail(std::vector<int>& rails, int rail) {
  if (rail < 0) return;
  const auto at = std::lower_bound(rails.begin(), rails.end(), rail);
  if (at == rails.end() || *at != rail) rails.insert(at, rail);
}

void add_job(std::vector<std::uint64_t>& jobs, bool& truncated, std::uint64_t job) {
  const auto at = std::lower_bound(jobs.begin(), jobs.end(), job);
  if (at != jobs.end() && *at == job) return;
  if (jobs.size() >= kMaxJobsPerEvent) {
    truncated = true;
    return;
  }
  jobs.insert(at, job);
}

void add_leaf(std::vector<EventNode>& leaves, bool& truncated, const EventNode& leaf) {
  for (EventNode& l : leaves) {
    if (l.guid == leaf.guid) {
      l.name = leaf.name;  // the latest name (a node-name-map reload)
      return;
    }
  }
  if (leaves.size() < kMaxLeavesPerEvent) {
    leaves.push_back(leaf);
  } else {
    truncated = true;
  }
}

std::size_t cause_index(CongestionCause c) { return static_cast<std::size_t>(c); }

}  // namespace

void CongestionEventTracker::absorb(CongestionEvent& e, const TreeSeen& tree, const EventNode& root,
                                    const SweepSeen& sweep, const std::vector<std::uint64_t>* jobs,
                                    const std::vector<EventSender>* senders) {
  const Fabric& fabric = *sweep.fabric;
  const std::vector<std::string>& node_names = *sweep.node_names;
  const double now = sweep.now;
  const double interval = sweep.interval;
  const CongestionRoot& r = *tree.root;
  e.root.name = root.name;
  e.far =
      tree.port->linked() ? event_node(fabric, node_names, tree.port->remote_node) : EventNode{};
  e.far_port = tree.port->linked() ? tree.port->remote_port : 0;
  e.last_seen = now;
  e.absent_sweeps = 0;
  ++e.sweeps;
  e.congested_seconds += interval;
  const bool peak = r.score > e.peak_score;
  if (senders != nullptr && !senders->empty() && (peak || e.senders.empty())) {
    e.senders.assign(senders->begin(),
                     senders->begin() + static_cast<std::ptrdiff_t>(
                                            std::min(senders->size(), kMaxSendersPerEvent)));
  }
  if (peak) {
    e.peak_score = r.score;
    e.peak_at = now;
    e.cause = r.cause;
  } else if (e.cause == CongestionCause::kUnexplained && r.cause != CongestionCause::kUnexplained) {
    // A mechanism found later names what the first, partial sweeps could not.
    e.cause = r.cause;
  }
  e.peak_victims = std::max<std::uint64_t>(e.peak_victims, r.victims);
  for (const int rail : tree.rails) add_rail(e.rails, rail);
  for (const std::int32_t leaf : tree.leaves) {
    add_leaf(e.leaves, e.leaves_truncated, event_node(fabric, node_names, leaf));
  }
  if (jobs != nullptr) {
    for (const std::uint64_t job : *jobs) add_job(e.jobs, e.jobs_truncated, job);
  }
}

std::vector<CongestionEventTracker::TreeSeen> CongestionEventTracker::trees_of(
    const SweepAnalysis& analysis, const Fabric& fabric) {
  const AnalysisResult& result = analysis.result;
  const CongestionForest& forest = result.congestion;
  const Topology* topology = analysis.topology.get();
  std::vector<TreeSeen> trees;
  trees.reserve(forest.roots.size());
  std::unordered_map<std::size_t, std::size_t> tree_of_root;  // root port -> trees index
  for (const CongestionRoot& r : forest.roots) {
    if (r.port >= result.ports.size()) continue;
    const PortScore& ps = result.ports[r.port];
    if (ps.node < 0 || static_cast<std::size_t>(ps.node) >= fabric.nodes.size()) continue;
    const FabricNode& node = fabric.nodes[static_cast<std::size_t>(ps.node)];
    if (ps.port_index >= node.ports.size()) continue;
    tree_of_root.emplace(r.port, trees.size());
    TreeSeen tree{&r, ps.node, &node.ports[ps.port_index], {}, {}};
    // The leaf at the far end of the root's cable: a spine's down port
    // feeds it (a leaf's own ports add their leaf below).
    const FabricPort& fp = *tree.port;
    if (topology != nullptr && fp.linked() &&
        static_cast<std::size_t>(fp.remote_node) < topology->tier.size() &&
        topology->tier[static_cast<std::size_t>(fp.remote_node)] == Tier::kLeaf) {
      tree.leaves.push_back(fp.remote_node);
    }
    trees.push_back(std::move(tree));
  }
  // The ports chained to each root: their rails, and their leaves.
  const std::size_t members = std::min(forest.root.size(), result.ports.size());
  for (std::size_t q = 0; q < members && !trees.empty(); ++q) {
    if (forest.root[q] == kNoPort) continue;
    const auto t = tree_of_root.find(forest.root[q]);
    if (t == tree_of_root.end()) continue;  // a root beyond the top K
    TreeSeen& tree = trees[t->second];
    const PortScore& ps = result.ports[q];
    add_rail(tree.rails, ps.rail);
    const auto node = static_cast<std::size_t>(ps.node);
    if (topology != nullptr && node < topology->tier.size() &&
        topology->tier[node] == Tier::kLeaf &&
        std::find(tree.leaves.begin(), tree.leaves.end(), ps.node) == tree.leaves.end()) {
      tree.leaves.push_back(ps.node);
    }
  }
  return trees;
}

bool CongestionEventTracker::follow_tree(const TreeSeen& tree, const SweepSeen& sweep,
                                         std::vector<bool>& seen,
                                         std::vector<CongestionEvent>& still_pending) {
  const CongestionRoot& r = *tree.root;
  const Fabric& fabric = *sweep.fabric;
  const std::vector<std::string>& node_names = *sweep.node_names;
  const EventNode root = event_node(fabric, node_names, tree.node);
  const std::uint8_t port = tree.port->number;
  auto same_root = [&](const CongestionEvent& e) {
    return e.root.guid == root.guid && e.root_port == port;
  };
  const auto k = static_cast<std::size_t>(tree.root - sweep.forest->roots.data());
  const std::vector<std::uint64_t>* jobs =
      k < sweep.root_jobs->size() ? &(*sweep.root_jobs)[k] : nullptr;
  const std::vector<EventSender>* senders =
      k < sweep.root_senders->size() ? &(*sweep.root_senders)[k] : nullptr;
  if (auto it = std::find_if(active_.begin(), active_.end(), same_root); it != active_.end()) {
    seen[static_cast<std::size_t>(it - active_.begin())] = true;
    absorb(*it, tree, root, sweep, jobs, senders);
    counters_.seconds[cause_index(r.cause)] += sweep.interval;
    return true;
  }
  CongestionEvent draft;
  if (auto it = std::find_if(pending_.begin(), pending_.end(), same_root); it != pending_.end()) {
    draft = std::move(*it);
  } else {
    draft.root = root;
    draft.root_port = port;
    draft.cause = r.cause;
    draft.start = sweep.now - sweep.interval;
    draft.peak_score = r.score;
    draft.peak_at = sweep.now;
  }
  absorb(draft, tree, root, sweep, jobs, senders);
  // A named mechanism opens at once (and takes the pending sweeps with
  // it); `unexplained` only once it has persisted.
  if (r.cause != CongestionCause::kUnexplained || draft.sweeps >= kPersistSweeps) {
    open(std::move(draft));
    seen.push_back(true);
    return true;
  }
  still_pending.push_back(std::move(draft));
  return false;
}

bool CongestionEventTracker::mark_absent(const std::vector<bool>& seen) {
  bool changed = false;
  for (std::size_t i = 0; i < active_.size(); ++i) {
    if (seen[i]) continue;
    ++active_[i].absent_sweeps;
    changed = true;
  }
  return changed;
}

void CongestionEventTracker::observe(const SweepAnalysis& analysis, const Fabric& fabric,
                                     const std::vector<std::string>& node_names, double now,
                                     const std::vector<std::vector<std::uint64_t>>& root_jobs,
                                     const std::vector<std::vector<EventSender>>& root_senders) {
  if (analysis.result.ports.empty()) return;
  const SweepSeen sweep{&analysis.result.congestion, &fabric,    &node_names,  now,
                        analysis.interval_seconds,   &root_jobs, &root_senders};
  bool changed = false;
  // Each root continues its event, or its pending one, or starts one.
  std::vector<bool> seen(active_.size(), false);
  std::vector<CongestionEvent> still_pending;
  for (const TreeSeen& tree : trees_of(analysis, fabric)) {
    changed = follow_tree(tree, sweep, seen, still_pending) || changed;
  }
  // A pending root absent from one sweep was no incident (nothing of it
  // was published).
  pending_ = std::move(still_pending);
  changed = mark_absent(seen) || changed;
  const std::size_t ended_before = ended_.size();
  end_expired(now);
  trim(now);
  changed = changed || ended_.size() != ended_before;
  if (changed) publish();
}

void CongestionEventTracker::open(CongestionEvent draft) {
  draft.id = next_id_++;
  ++counters_.started[cause_index(draft.cause)];
  counters_.seconds[cause_index(draft.cause)] += draft.congested_seconds;
  active_.push_back(std::move(draft));
}

void CongestionEventTracker::end_expired(double now) {
  auto expired = [now](const CongestionEvent& e) {
    return e.absent_sweeps >= kGraceSweeps && now - e.last_seen >= kGraceSeconds;
  };
  for (CongestionEvent& e : active_) {
    if (!expired(e)) continue;
    e.end = e.last_seen;
    ended_.push_back(std::move(e));
  }
  active_.erase(std::remove_if(active_.begin(), active_.end(),
                               [](const CongestionEvent& e) { return e.end.has_value(); }),
                active_.end());
}

void CongestionEventTracker::trim(double now) {
  while (ended_.size() > kMaxEnded) ended_.pop_front();
  ended_.erase(std::remove_if(ended_.begin(), ended_.end(),
                              [now](const CongestionEvent& e) {
                                return now - e.end.value_or(now) > kMaxAgeSeconds;
                              }),
               ended_.end());
}

void CongestionEventTracker::publish() {
  auto list = std::make_shared<EventList>();
  list->reserve(active_.size() + ended_.size());
  list->insert(list->end(), active_.begin(), active_.end());
  list->insert(list->end(), ended_.begin(), ended_.end());
  std::sort(list->begin(), list->end(), [](const CongestionEvent& a, const CongestionEvent& b) {
    return a.start != b.start ? a.start > b.start : a.id > b.id;
  });
  list_ = std::move(list);
  ++version_;
}

void CongestionEventTracker::restore(EventTrackerState state, double now) {
  active_.clear();
  ended_.clear();
  counters_ = state.counters;
  next_id_ = state.next_id;
  for (CongestionEvent& e : state.events) {
    next_id_ = std::max(next_id_, e.id + 1);
    // The daemon was away: its root was not seen meanwhile. Gone longer
    // than the grace, the event ended when it was last seen.
    if (e.active() && now - e.last_seen > kGraceSeconds) e.end = e.last_seen;
    if (e.active()) {
      active_.push_back(std::move(e));
    } else {
      ended_.push_back(std::move(e));
    }
  }
  std::sort(active_.begin(), active_.end(),
            [](const CongestionEvent& a, const CongestionEvent& b) { return a.id < b.id; });
  std::sort(ended_.begin(), ended_.end(), [](const CongestionEvent& a, const CongestionEvent& b) {
    return *a.end != *b.end ? *a.end < *b.end : a.id < b.id;
  });
  trim(now);
  publish();
}

EventTrackerState CongestionEventTracker::state() const {
  EventTrackerState s;
  s.next_id = next_id_;
  s.counters = counters_;
  s.events.reserve(active_.size() + ended_.size());
  s.events.insert(s.events.end(), active_.begin(), active_.end());
  s.events.insert(s.events.end(), ended_.begin(), ended_.end());
  return s;
}

}  // namespace ibfx
