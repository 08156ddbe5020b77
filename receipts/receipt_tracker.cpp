#include "receipts/receipt_tracker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/slurm_node.h"
#include "receipts/receipt_json_value.h"

namespace ibfx {

namespace {

using Json = nlohmann::json;

constexpr int kSavedStateVersion = 1;
// (source, destination) pairs traced per job for the cross-spine share: a
// sample, strided over the job's ports, so that a 512-host job costs what
// a small one does (the share is a fraction, 64 pairs give it to ~6 %).
constexpr std::size_t kCrossSpinePairs = 64;
// Jobs whose pair fraction is computed in one sweep: a new route model
// must not make one sweep trace every job's pairs at once.
constexpr std::size_t kCrossSpineJobsPerSweep = 200;
// A leaf is a job's alone (for the uplinks basis) when the HCA ports on it
// that are not the job's sent at most this share of what the job's sent:
// a monitoring agent's or the subnet manager's few packets must not cost
// the job its figure, another job's traffic must.
constexpr double kAloneOnLeafTolerance = 0.01;
// Slurm's end_time of a job may be ahead of the sweep that found it ended
// by the fetch's time and the two hosts' clocks; more than this is no end
// (the poll's time is taken instead).
constexpr double kSlurmEndAhead = 60;

// Which HCA port: the node's GUID and the port number (stable across
// rediscoveries, unlike node indices).
using PortId = std::pair<std::uint64_t, std::uint8_t>;

// The host and the device of an HCA as node health names them: the node
// description's first word and the rest ("gpu0413 mlx5_3"), made safe.
ReceiptPort name_port(const FabricNode& node, std::uint8_t port) {
  ReceiptPort p;
  p.guid = node.guid;
  p.port = port;
  const std::string_view d = node.description;
  const auto space = d.find(' ');
  p.host = safe_node_word(d.substr(0, space));
  p.device = safe_node_word(space == std::string_view::npos ? std::string_view("hca")
                                                            : d.substr(space + 1));
  return p;
}

}  // namespace

// What the tracker keeps of one running job between sweeps.
struct ReceiptTracker::Running {
  struct PortLife {
    ReceiptPort name;
    double port_seconds = 0;
    double stall_seconds = 0;
  };
  struct LinkLife {
    ReceiptLinkIssue issue;
    std::uint32_t last_downs = 0;  // LinkReport::downs_last_hour last sweep
  };

  JobReceipt r;  // identity and sums so far; verdict, line, culprits, rails unset
  double first_seen = 0;
  double last_seen = 0;
  double listed_at = 0;      // jobs_polled_at of the newest list that held it
  double counted_until = 0;  // the end of the last interval counted (a sweep's time)
  bool seen_in_sweep = false;
  std::map<PortId, PortLife> ports;
  std::map<int, ReceiptRail> rails;
  std::unordered_map<std::uint64_t, double> culprits;
  std::map<PortId, LinkLife> links;
  // The wall-clock minute being summed, and the worst finished one.
  double minute = -1;
  double minute_port_seconds = 0;
  double minute_stall_seconds = 0;
  // Cross-spine: the fraction of the job's own pairs that cross above a
  // leaf, for model `pairs_model` (generation) and `pairs_ports` HCA ports;
  // bytes sent while it was known, and those times the fraction.
  std::uint64_t pairs_model = 0;
  std::size_t pairs_ports = 0;
  double pair_fraction = -1;
  double known_bytes = 0;
  double crossing_bytes = 0;
  // Uplinks, in sweeps without a route model: the bytes the job sent on the
  // leaves it had alone, and the bytes those leaves sent up to spines.
  double uplink_known_bytes = 0;
  double uplink_crossing_bytes = 0;

  std::size_t memory_bytes() const {
    std::size_t b =
        sizeof(Running) + r.name.capacity() + r.user.capacity() + r.partition.capacity();
    for (const std::string& h : r.hosts) b += sizeof(std::string) + h.capacity();
    // A std::map node: the value and about four words of links and colour.
    for (const auto& [id, p] : ports) {
      b += sizeof(id) + sizeof(p) + 32 + p.name.host.capacity() + p.name.device.capacity();
    }
    b += rails.size() * (sizeof(int) + sizeof(ReceiptRail) + 32);
    b += culprits.size() * (sizeof(std::uint64_t) + sizeof(double) + 24);
    b += links.size() * (sizeof(PortId) + sizeof(LinkLife) + 32);
    return b;
  }

  void close_minute() {
    if (minute >= 0 && minute_port_seconds > 0) {
      const double ratio = minute_stall_seconds / minute_port_seconds;
      if (ratio > r.worst_minute_ratio) {
        r.worst_minute_ratio = ratio;
        r.worst_minute = minute;
      }
    }
    minute_port_seconds = 0;
    minute_stall_seconds = 0;
  }

  // The receipt if the job ended at `end` (numbers complete, verdict set).
  JobReceipt finish(double end, bool end_known, const ReceiptsConfig& config) const {
    JobReceipt out = r;
    out.end = std::max(end, out.start);
    out.end_known = end_known;
    // The last intervals counted may run past Slurm's end_time (the job
    // was listed running at a poll before it ended): that part is not of
    // its run, and the time its run was not observed stays said.
    out.observed_seconds -= std::clamp(counted_until - out.end, 0.0, out.observed_seconds);
    out.observed_seconds = std::min(out.observed_seconds, out.end - out.start);
    out.missed_seconds = (out.end - out.start) - out.observed_seconds;
    for (const auto& [rail, sums] : rails) out.rails.push_back(sums);
    // Routes, when any sweep had them, are the better basis: they are the
    // job's own pairs, where uplinks only count on leaves it had alone.
    if (known_bytes > 0) {
      out.cross_spine_share = crossing_bytes / known_bytes;
      out.cross_spine_basis = CrossSpineBasis::kRoutes;
    } else if (uplink_known_bytes > 0) {
      out.cross_spine_share = std::clamp(uplink_crossing_bytes / uplink_known_bytes, 0.0, 1.0);
      out.cross_spine_basis = CrossSpineBasis::kUplinks;
    }
    double worst = -1;
    for (const auto& [id, p] : ports) {
      if (p.port_seconds <= 0) continue;
      const double ratio = p.stall_seconds / p.port_seconds;
      if (ratio > worst) {
        worst = ratio;
        out.worst_port = p.name;
        out.worst_port.stall_ratio = ratio;
      }
    }
    if (minute >= 0 && minute_port_seconds > 0 &&
        minute_stall_seconds / minute_port_seconds > out.worst_minute_ratio) {
      out.worst_minute_ratio = minute_stall_seconds / minute_port_seconds;
      out.worst_minute = minute;
    }
    for (const auto& [id, seconds] : culprits) out.culprits.push_back({id, seconds});
    std::sort(out.culprits.begin(), out.culprits.end(), [](const auto& a, const auto& b) {
      return a.stall_seconds != b.stall_seconds ? a.stall_seconds > b.stall_seconds
                                                : a.job_id < b.job_id;
    });
    if (out.culprits.size() > kReceiptCulprits) out.culprits.resize(kReceiptCulprits);
    for (const auto& [id, l] : links) {
      out.links.push_back(l.issue);
      // Seen while it ran: a sweep past Slurm's end_time (before a poll
      // said so) saw it after.
      ReceiptLinkIssue& issue = out.links.back();
      issue.last_seen = std::min(issue.last_seen, out.end);
      issue.first_seen = std::min(issue.first_seen, issue.last_seen);
    }
    std::stable_sort(out.links.begin(), out.links.end(),
                     [](const auto& a, const auto& b) { return a.first_seen < b.first_seen; });
    judge_receipt(out, config);
    return out;
  }

  // ReceiptTracker::accumulate's steps for HCA port p (an analysed port
  // index) of job j (an index into the join) this sweep. add_port: all of
  // them for the port; the bytes it sent.
  double add_port(const ReceiptSweepInput& in, const ReceiptSweepIndex& x, std::size_t j,
                  std::size_t p, const std::unordered_map<std::uint64_t, std::size_t>& leaf_into);
  // Uplinks basis: the share of the leaf's up bytes, when the job has it alone.
  void add_uplink_share(const ReceiptSweepInput& in, const ReceiptSweepIndex& x, std::size_t j,
                        std::size_t p, double sent);
  void add_traffic(int rail_number, double sent, double received);
  // The port's entry (made on its first sweep), and its id.
  PortLife& port_life(const ReceiptSweepInput& in, const PortScore& s, PortId& id);
  void note_link(const PortId& id, const ReceiptPort& name, const LinkReport& report, double now);
  // The port's stall of the interval, and whose tree it was in.
  void add_stall(const ReceiptSweepInput& in, const ReceiptSweepIndex& x, std::size_t j,
                 std::size_t p, PortLife& life);
  // Routes basis: the job's pair fraction (traced again for a new model or
  // another port count, within the sweep's budget) times what it sent.
  void note_pairs(const RouteModel& model, std::uint64_t generation, const ReceiptSweepInput& in,
                  const std::vector<std::size_t>& hca, double sent_now, std::size_t& pair_budget);

  // A list has the job: its names and hosts as the list has them, and seen
  // in this sweep.
  void note_listed(const SlurmJob& job, const ReceiptSweepInput& in);

  // One saved job as save() wrote it; null, and `error` set, when it is
  // not.
  static std::unique_ptr<Running> restored(const Json& j, std::string& error);
  // restored's steps (its "receipt" read already): each sets `error` when
  // its part is not as save() wrote it.
  void restore_times(const Json& j, std::string& error);
  void restore_ports(const Json& ports, std::string& error);
  void restore_rails(const Json& rails, std::string& error);
  void restore_culprits(const Json& culprits, std::string& error);
  void restore_links(const Json& links, std::string& error);
};

namespace {

// What one sweep's analysis says, indexed once for every job: which
// exported root each analysed root port is, its senders, and the jobs
// (indices into the join) on each sender or root port.
}  // namespace

struct ReceiptSweepIndex {
  // One switch's sweep for the uplinks basis: what its up ports and the
  // HCA ports cabled to it sent, and the job that sent most of the latter.
  struct Leaf {
    static constexpr std::size_t kNoJob = static_cast<std::size_t>(-1);
    bool is_leaf = false;       // some analysed port of it is tier leaf
    double up_bytes = 0;        // sent by its up ports (towards spines)
    double hca_bytes = 0;       // sent by the HCA ports cabled to it, each once
    double job_bytes = 0;       // sent by them, each once per job listing it
    std::size_t top = kNoJob;   // the job (join index) that sent the most
    double top_bytes = 0;       // what it sent
    std::size_t last = kNoJob;  // the job being summed (jobs are summed one by one)
    double last_bytes = 0;

    // Whether job `j` had the leaf alone this sweep (and sent something).
    bool alone(std::size_t j) const {
      if (!is_leaf || top != j || top_bytes <= 0) return false;
      // Not the job's: ports of no job (hca_bytes) and ports of others,
      // shared hosts' included (job_bytes).
      const double others = std::max(hca_bytes, job_bytes) - top_bytes;
      return others <= kAloneOnLeafTolerance * top_bytes;
    }
  };

  std::unordered_map<std::size_t, std::size_t> exported;              // root port -> index in roots
  std::unordered_map<std::size_t, const RootSenders*> senders;        // roots index -> senders
  std::unordered_map<std::size_t, std::vector<std::size_t>> jobs_on;  // port -> join jobs
  std::unordered_map<std::uint64_t, const LinkReport*> link_at;       // (node, port) -> link
  // By fabric node; empty when the sweep has a route model (routes win)
  // or no fabric.
  std::vector<Leaf> leaves;
};

namespace {

using SweepIndex = ReceiptSweepIndex;

std::uint64_t node_port_key(std::int32_t node, std::int64_t port_index) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(node)) << 32) |
         static_cast<std::uint32_t>(port_index);
}

// The worst of two conditions a link had while the job ran. `down` ranks
// above `flapping` as a link's state now, but over a run a flapping link
// was down in between: a sweep that caught it down must not make the
// receipt say "went down" instead of "flapped" (which one depended on when
// the sweeps fell), so the two make `flapping`.
LinkCondition over_a_run(LinkCondition seen, LinkCondition now) {
  const bool down_and_flapping =
      (seen == LinkCondition::kDown && now == LinkCondition::kFlapping) ||
      (seen == LinkCondition::kFlapping && now == LinkCondition::kDown);
  return down_and_flapping ? LinkCondition::kFlapping : worst(seen, now);
}

bool is_hca_port(const ReceiptSweepInput& in, std::size_t p) {
  const PortScore& s = in.analysis->result.ports[p];
  if (in.fabric != nullptr && s.node >= 0 &&
      static_cast<std::size_t>(s.node) < in.fabric->nodes.size()) {
    return in.fabric->nodes[static_cast<std::size_t>(s.node)].type == NodeType::kHca;
  }
  return s.tier == Tier::kHca;
}

// The switch node an HCA port (analysed port `p`) is cabled to, or -1.
std::int32_t switch_of(const ReceiptSweepInput& in, std::size_t p) {
  const PortScore& s = in.analysis->result.ports[p];
  const Fabric& f = *in.fabric;
  if (s.node < 0 || static_cast<std::size_t>(s.node) >= f.nodes.size()) return -1;
  const FabricNode& n = f.nodes[static_cast<std::size_t>(s.node)];
  if (s.port_index >= n.ports.size()) return -1;
  const std::int32_t far = n.ports[s.port_index].remote_node;
  if (far < 0 || static_cast<std::size_t>(far) >= f.nodes.size() ||
      f.nodes[static_cast<std::size_t>(far)].type != NodeType::kSwitch)
    return -1;
  return far;
}

// The uplinks basis's per-leaf sums: one pass over the analysed ports and
// one over the jobs' ports. PortXmitData counts 4-byte words.
void index_leaves(const ReceiptSweepInput& in, SweepIndex& x) {
  const std::vector<PortScore>& scores = in.analysis->result.ports;
  const std::vector<PortSample>& samples = in.analysis->samples;
  x.leaves.assign(in.fabric->nodes.size(), {});
  const auto leaf_at = [&](std::int32_t node) -> SweepIndex::Leaf* {
    return node >= 0 && static_cast<std::size_t>(node) < x.leaves.size()
               ? &x.leaves[static_cast<std::size_t>(node)]
               : nullptr;
  };
  for (std::size_t p = 0; p < scores.size(); ++p) {
    const PortScore& s = scores[p];
    const double sent = static_cast<double>(samples[p].xmit_data_words) * 4;
    if (s.tier == Tier::kLeaf) {
      if (SweepIndex::Leaf* leaf = leaf_at(s.node)) {
        leaf->is_leaf = true;
        if (s.direction == PortDirection::kUp) leaf->up_bytes += sent;
      }
    } else if (is_hca_port(in, p)) {
      if (SweepIndex::Leaf* leaf = leaf_at(switch_of(in, p))) leaf->hca_bytes += sent;
    }
  }
  for (std::size_t j = 0; j < in.join->jobs.size(); ++j) {
    for (const std::size_t p : in.join->jobs[j].ports) {
      if (p >= scores.size() || !is_hca_port(in, p)) continue;
      SweepIndex::Leaf* leaf = leaf_at(switch_of(in, p));
      if (leaf == nullptr) continue;
      const double sent = static_cast<double>(samples[p].xmit_data_words) * 4;
      leaf->job_bytes += sent;
      if (leaf->last != j) {
        leaf->last = j;
        leaf->last_bytes = 0;
      }
      leaf->last_bytes += sent;
      if (leaf->last_bytes > leaf->top_bytes || leaf->top == j) {
        leaf->top = j;
        leaf->top_bytes = leaf->last_bytes;
      }
    }
  }
}

SweepIndex index_sweep(const ReceiptSweepInput& in, bool uplinks) {
  SweepIndex x;
  if (uplinks && in.fabric != nullptr && in.join != nullptr) index_leaves(in, x);
  const CongestionForest& forest = in.analysis->result.congestion;
  for (std::size_t i = 0; i < forest.roots.size(); ++i) x.exported[forest.roots[i].port] = i;
  if (in.routes != nullptr) {
    for (const RootSenders& s : in.routes->senders) {
      if (s.root >= forest.roots.size()) continue;
      x.senders[s.root] = &s;
      for (const RootSender& t : s.top) {
        if (t.port != kNoPort) x.jobs_on[t.port];
      }
    }
  }
  for (const CongestionRoot& root : forest.roots) x.jobs_on[root.port];
  // One pass over every job's ports fills the index for just the ports a
  // split can ask about (a few hundred), not for the whole fabric.
  if (in.join != nullptr && !x.jobs_on.empty()) {
    for (std::size_t j = 0; j < in.join->jobs.size(); ++j) {
      for (const std::size_t p : in.join->jobs[j].ports) {
        const auto it = x.jobs_on.find(p);
        // The leaf ports into its hosts are not the job's: a root there
        // (an incast into its host) is fed by whoever sends to it.
        if (it != x.jobs_on.end() && (it->second.empty() || it->second.back() != j) &&
            is_hca_port(in, p))
          it->second.push_back(j);
      }
    }
  }
  if (in.links != nullptr) {
    for (const LinkReport& l : in.links->links) {
      if (l.condition == LinkCondition::kNone) continue;
      for (const LinkEnd* end : {&l.a, &l.b}) {
        if (end->node != kNoNode && end->port_index >= 0)
          x.link_at[node_port_key(end->node, end->port_index)] = &l;
      }
    }
  }
  return x;
}

// Of a stalled port's stall in the tree of exported root `root_index`:
// the parts of job `j` itself, of other jobs (by id), of no job.
struct Split {
  double self = 0;
  double unattributed = 0;
  std::vector<std::pair<std::uint64_t, double>> others;
};

Split split_tree(const ReceiptSweepInput& in, const SweepIndex& x, std::size_t job,
                 std::size_t root_port, std::size_t root_index, double stall) {
  Split s;
  const auto owner = x.jobs_on.find(root_port);
  if (owner != x.jobs_on.end() &&
      std::find(owner->second.begin(), owner->second.end(), job) != owner->second.end()) {
    // The root is one of its own HCA ports: nobody else's traffic explains it.
    s.self = stall;
    return s;
  }
  const auto senders = x.senders.find(root_index);
  double total = 0;
  if (senders != x.senders.end()) {
    for (const RootSender& t : senders->second->top) total += std::max(0.0, t.bytes_per_second);
  }
  if (total <= 0) {
    s.unattributed = stall;
    return s;
  }
  for (const RootSender& t : senders->second->top) {
    const double part = stall * std::max(0.0, t.bytes_per_second) / total;
    const auto on = t.port == kNoPort ? x.jobs_on.end() : x.jobs_on.find(t.port);
    if (on == x.jobs_on.end() || on->second.empty()) {
      s.unattributed += part;
      continue;
    }
    // A sender on several jobs' hosts (jobs sharing hosts): its bytes split
    // evenly between them, none can be told apart on the port.
    const double each = part / static_cast<double>(on->second.size());
    for (const std::size_t k : on->second) {
      if (k == job) {
        s.self += each;
      } else {
        s.others.emplace_back(in.join->jobs[k].job_id, each);
      }
    }
  }
  return s;
}

// The share of (source, destination) pairs among the job's HCA ports,
// same rail, whose route leaves the leaf: a path through more than one
// switch. -1: no pair could be traced.
double crossing_pair_fraction(const RouteModel& model, const ReceiptSweepInput& in,
                              const std::vector<std::size_t>& hca) {
  std::map<int, std::vector<RouteEndpoint>> by_rail;
  std::map<int, std::vector<std::uint16_t>> lids;
  const Fabric& f = model.fabric();
  for (const std::size_t p : hca) {
    const PortScore& s = in.analysis->result.ports[p];
    if (s.node < 0 || static_cast<std::size_t>(s.node) >= f.nodes.size()) continue;
    const FabricNode& node = f.nodes[static_cast<std::size_t>(s.node)];
    if (s.port_index >= node.ports.size()) continue;
    const FabricPort& port = node.ports[s.port_index];
    if (port.lid == 0) continue;
    by_rail[s.rail].push_back({s.node, port.number});
    lids[s.rail].push_back(port.lid);
  }
  std::size_t possible = 0;
  for (const auto& [rail, ends] : by_rail) possible += ends.size() * (ends.size() - 1);
  if (possible == 0) return -1;
  // Every stride-th pair of the rail-by-rail enumeration.
  const std::size_t stride = std::max<std::size_t>(1, possible / kCrossSpinePairs);
  std::size_t n = 0;
  std::size_t traced = 0;
  std::size_t crossing = 0;
  for (const auto& [rail, ends] : by_rail) {
    const std::vector<std::uint16_t>& rail_lids = lids[rail];
    for (std::size_t a = 0; a < ends.size(); ++a) {
      for (std::size_t b = 0; b < ends.size(); ++b) {
        if (a == b || n++ % stride != 0) continue;
        const RouteTrace t = model.trace(ends[a], rail_lids[b]);
        if (!t.ok()) continue;
        ++traced;
        if (t.hops.size() > 1) ++crossing;
      }
    }
  }
  return traced == 0 ? -1 : static_cast<double>(crossing) / static_cast<double>(traced);
}

}  // namespace

ReceiptTracker::ReceiptTracker(ReceiptsConfig config) : config_(config) {}

ReceiptTracker::~ReceiptTracker() = default;
ReceiptTracker::ReceiptTracker(ReceiptTracker&&) noexcept = default;
ReceiptTracker& ReceiptTracker::operator=(ReceiptTracker&&) noexcept = default;

void ReceiptTracker::reload(const ReceiptsConfig& config) { config_ = config; }

namespace {

// The route model of the sweep's fabric; null when there is none, or it is
// of an earlier discovery.
const RouteModel* route_model_of(const ReceiptSweepInput& in) {
  return in.routes != nullptr && in.routes->model && in.analysis != nullptr &&
                 in.fabric != nullptr && &in.routes->model->fabric() == in.fabric
             ? in.routes->model.get()
             : nullptr;
}

}  // namespace

void ReceiptTracker::end_all_unlisted(double now, double limit, std::vector<JobReceipt>& finished) {
  if (!running_.empty() && now - last_polled_ > limit) {
    for (const auto& run : running_) {
      if (run->seen_in_sweep) finished.push_back(run->finish(run->last_seen, false, config_));
    }
    running_.clear();
  }
}

// Jobs a newer list left out ended at Slurm's end_time when the list
// shows them ended, else when that list was polled.
void ReceiptTracker::end_left_out(const ReceiptSweepInput& in, std::vector<JobReceipt>& finished) {
  std::unordered_set<std::uint64_t> in_list;
  in_list.reserve(in.jobs->size());
  for (const SlurmJob& j : *in.jobs) in_list.insert(j.job_id);
  std::unordered_map<std::uint64_t, double> slurm_ends;  // built when a job left
  const auto end_of = [&](const Running& run) {
    if (in.ended == nullptr) return in.jobs_polled_at;
    if (slurm_ends.empty()) {
      for (const SlurmJobEnd& e : *in.ended)
        slurm_ends.emplace(e.job_id, static_cast<double>(e.end_time));
    }
    const auto it = slurm_ends.find(run.r.job_id);
    // Slurm's clock, not ours: a little after the poll is the fetch's
    // time (the poll is timed before it); before the start or far ahead
    // of this sweep is no end.
    const bool usable = it != slurm_ends.end() && it->second >= run.r.start &&
                        it->second <= in.now + kSlurmEndAhead;
    return usable ? it->second : in.jobs_polled_at;
  };
  std::erase_if(running_, [&](const std::unique_ptr<Running>& run) {
    if (in_list.contains(run->r.job_id) || in.jobs_polled_at <= run->listed_at) return false;
    if (run->seen_in_sweep) finished.push_back(run->finish(end_of(*run), true, config_));
    return true;
  });
}

ReceiptTracker::Running* ReceiptTracker::start_running(const SlurmJob& job, double now) {
  running_.push_back(std::make_unique<Running>());
  Running* run = running_.back().get();
  run->r.job_id = job.job_id;
  run->first_seen = now;
  run->r.start = job.start_time > 0 ? std::min(static_cast<double>(job.start_time), now) : now;
  return run;
}

void ReceiptTracker::Running::note_listed(const SlurmJob& job, const ReceiptSweepInput& in) {
  r.name = job.name;
  r.user = job.user;
  r.partition = job.partition;
  r.hosts = job.hosts;
  listed_at = std::max(listed_at, in.jobs_polled_at);
  last_seen = in.now;
  seen_in_sweep = true;
}

void ReceiptTracker::follow_listed(const ReceiptSweepInput& in) {
  std::unordered_map<std::uint64_t, Running*> by_id;
  by_id.reserve(running_.size());
  for (const auto& run : running_) by_id[run->r.job_id] = run.get();

  const bool usable = in.join != nullptr && in.analysis != nullptr &&
                      in.join->jobs.size() == in.jobs->size() &&
                      in.analysis->samples.size() == in.analysis->result.ports.size();
  const RouteModel* model = route_model_of(in);
  SweepIndex x;
  // Without a route model (routes off, or one being built) the leaves'
  // up ports say what crossed, for jobs alone on their leaves.
  if (usable) x = index_sweep(in, model == nullptr);
  if (model != nullptr && model != model_seen_) {
    model_seen_ = model;
    ++model_generation_;
  }
  std::size_t pair_budget = kCrossSpineJobsPerSweep;
  const double dt = in.analysis != nullptr ? in.analysis->interval_seconds : 0;
  const double minute = std::floor(in.now / 60) * 60;

  for (std::size_t j = 0; j < in.jobs->size(); ++j) {
    const SlurmJob& job = (*in.jobs)[j];
    Running* run = nullptr;
    bool was_running = true;
    if (const auto it = by_id.find(job.job_id); it != by_id.end()) {
      run = it->second;
    } else {
      run = start_running(job, in.now);
      by_id[job.job_id] = run;
      was_running = false;
    }
    run->note_listed(job, in);
    // The interval ending now counts only if the job ran all of it: it was
    // running at the previous sweep, or Slurm says it started before.
    if (!usable || dt <= 0) continue;
    if (!was_running && (job.start_time <= 0 || static_cast<double>(job.start_time) > in.now - dt))
      continue;
    accumulate(*run, in, x, j, dt, minute, model, pair_budget);
  }
}

std::vector<JobReceipt> ReceiptTracker::observe(const ReceiptSweepInput& in) {
  std::vector<JobReceipt> finished;
  const double limit = seconds_of(config_.unknown_end_after);
  // The first sweep after a restore: a source outage is timed from here,
  // not from the last poll before the restart (no daemon polled while it
  // was down, and its first sweeps may run before the source's first poll:
  // the restored jobs must not end as "end not known" and then start again
  // with the first list, two receipts for one job).
  if (std::exchange(restored_, false)) last_polled_ = std::max(last_polled_, in.now);
  // A list older than unknown_end_after is no list: its jobs may have
  // ended any time since.
  const bool listed = in.jobs != nullptr && in.now - in.jobs_polled_at <= limit;
  if (!listed) {
    end_all_unlisted(in.now, limit, finished);
    return finished;
  }
  last_polled_ = std::max(last_polled_, in.jobs_polled_at);
  end_left_out(in, finished);
  follow_listed(in);
  return finished;
}

namespace {

// A job's HCA ports among its analysed ports, and the leaf ports into them
// by the HCA port they are cabled to: the bytes they transmit are the bytes
// the HCA received.
struct JobHcas {
  std::vector<std::size_t> hca;
  std::unordered_map<std::uint64_t, std::size_t> leaf_into;
};

JobHcas job_hcas(const ReceiptSweepInput& in, const JobPorts& jp) {
  const std::vector<PortScore>& scores = in.analysis->result.ports;
  JobHcas out;
  for (const std::size_t p : jp.ports) {
    if (p >= scores.size()) continue;
    if (is_hca_port(in, p)) {
      out.hca.push_back(p);
      continue;
    }
    if (in.fabric == nullptr) continue;
    const PortScore& s = scores[p];
    if (s.node < 0 || static_cast<std::size_t>(s.node) >= in.fabric->nodes.size()) continue;
    const FabricNode& n = in.fabric->nodes[static_cast<std::size_t>(s.node)];
    if (s.port_index >= n.ports.size()) continue;
    const FabricPort& fp = n.ports[s.port_index];
    if (fp.remote_node == kNoNode) continue;
    const FabricNode& far = in.fabric->nodes[static_cast<std::size_t>(fp.remote_node)];
    for (std::size_t i = 0; i < far.ports.size(); ++i) {
      if (far.ports[i].number == fp.remote_port) {
        out.leaf_into[node_port_key(fp.remote_node, static_cast<std::int64_t>(i))] = p;
        break;
      }
    }
  }
  return out;
}

}  // namespace

void ReceiptTracker::Running::add_uplink_share(const ReceiptSweepInput& in,
                                               const ReceiptSweepIndex& x, std::size_t j,
                                               std::size_t p, double sent) {
  const std::int32_t at = switch_of(in, p);
  if (at < 0 || static_cast<std::size_t>(at) >= x.leaves.size()) return;
  const ReceiptSweepIndex::Leaf& leaf = x.leaves[static_cast<std::size_t>(at)];
  // The leaf's up bytes shared over the job's ports on it by what
  // each sent: over them all, the leaf's up bytes once.
  if (leaf.alone(j)) {
    uplink_known_bytes += sent;
    uplink_crossing_bytes += leaf.up_bytes * sent / leaf.top_bytes;
  }
}

void ReceiptTracker::Running::add_traffic(int rail_number, double sent, double received) {
  r.bytes_sent += sent;
  r.bytes_received += received;
  ReceiptRail& rail = rails[rail_number];
  rail.rail = rail_number;
  rail.bytes_sent += sent;
  rail.bytes_received += received;
}

ReceiptTracker::Running::PortLife& ReceiptTracker::Running::port_life(const ReceiptSweepInput& in,
                                                                      const PortScore& s,
                                                                      PortId& id) {
  const FabricNode* node = in.fabric != nullptr && s.node >= 0 &&
                                   static_cast<std::size_t>(s.node) < in.fabric->nodes.size()
                               ? &in.fabric->nodes[static_cast<std::size_t>(s.node)]
                               : nullptr;
  const std::uint8_t number = node != nullptr && s.port_index < node->ports.size()
                                  ? node->ports[s.port_index].number
                                  : static_cast<std::uint8_t>(s.port_index + 1);
  id = PortId{node != nullptr ? node->guid : static_cast<std::uint64_t>(s.node), number};
  auto [life, added] = ports.try_emplace(id);
  if (added) {
    if (node != nullptr) {
      life->second.name = name_port(*node, number);
    } else {
      life->second.name.guid = id.first;
      life->second.name.port = number;
    }
  }
  return life->second;
}

void ReceiptTracker::Running::note_link(const PortId& id, const ReceiptPort& name,
                                        const LinkReport& report, double now) {
  auto [link, fresh] = links.try_emplace(id);
  ReceiptLinkIssue& issue = link->second.issue;
  if (fresh) {
    issue.port = name;
    issue.first_seen = now;
    issue.downs = report.downs_last_hour;
  } else if (report.downs_last_hour > link->second.last_downs) {
    issue.downs += report.downs_last_hour - link->second.last_downs;
  }
  link->second.last_downs = report.downs_last_hour;
  issue.condition = over_a_run(issue.condition, report.condition);
  issue.last_seen = now;
}

void ReceiptTracker::Running::add_stall(const ReceiptSweepInput& in, const ReceiptSweepIndex& x,
                                        std::size_t j, std::size_t p, PortLife& life) {
  const PortScore& s = in.analysis->result.ports[p];
  const double seconds = in.analysis->samples[p].interval_seconds;
  const double stall = std::clamp(s.stall, 0.0, 1.0) * seconds;
  r.port_seconds += seconds;
  r.stall_seconds += stall;
  life.port_seconds += seconds;
  life.stall_seconds += stall;
  minute_port_seconds += seconds;
  minute_stall_seconds += stall;
  if (stall <= 0) return;

  // Whose congestion: the tree this port stalled in, and who fed it.
  const CongestionForest& forest = in.analysis->result.congestion;
  const std::size_t root = p < forest.root.size() ? forest.root[p] : kNoPort;
  const auto exported = root == kNoPort ? x.exported.end() : x.exported.find(root);
  if (exported == x.exported.end()) {
    r.outside_trees_stall_seconds += stall;
    return;
  }
  const Split split = split_tree(in, x, j, root, exported->second, stall);
  r.self_stall_seconds += split.self;
  r.unattributed_stall_seconds += split.unattributed;
  for (const auto& [id_of_job, part] : split.others) {
    r.other_jobs_stall_seconds += part;
    culprits[id_of_job] += part;
  }
}

double ReceiptTracker::Running::add_port(
    const ReceiptSweepInput& in, const ReceiptSweepIndex& x, std::size_t j, std::size_t p,
    const std::unordered_map<std::uint64_t, std::size_t>& leaf_into) {
  const PortScore& s = in.analysis->result.ports[p];
  const PortSample& sample = in.analysis->samples[p];
  const double sent = static_cast<double>(sample.xmit_data_words) * 4;
  if (!x.leaves.empty()) add_uplink_share(in, x, j, p, sent);
  double received = 0;
  if (const auto leaf = leaf_into.find(node_port_key(s.node, s.port_index));
      leaf != leaf_into.end()) {
    received = static_cast<double>(in.analysis->samples[leaf->second].xmit_data_words) * 4;
  }
  add_traffic(s.rail, sent, received);
  PortId id;
  PortLife& life = port_life(in, s, id);
  // Link conditions on its cable (the HCA's end or the leaf's: one link).
  if (const auto l = x.link_at.find(node_port_key(s.node, s.port_index)); l != x.link_at.end()) {
    note_link(id, life.name, *l->second, in.now);
  }
  if (s.valid && sample.interval_seconds > 0) add_stall(in, x, j, p, life);
  return sent;
}

void ReceiptTracker::Running::note_pairs(const RouteModel& model, std::uint64_t generation,
                                         const ReceiptSweepInput& in,
                                         const std::vector<std::size_t>& hca, double sent_now,
                                         std::size_t& pair_budget) {
  if ((pairs_model != generation || pairs_ports != hca.size()) && pair_budget > 0) {
    --pair_budget;
    pairs_model = generation;
    pairs_ports = hca.size();
    pair_fraction = crossing_pair_fraction(model, in, hca);
  }
  if (pairs_model == generation && pair_fraction >= 0) {
    known_bytes += sent_now;
    crossing_bytes += sent_now * pair_fraction;
  }
}

void ReceiptTracker::accumulate(Running& run, const ReceiptSweepInput& in, const SweepIndex& x,
                                std::size_t j, double dt, double minute, const RouteModel* model,
                                std::size_t& pair_budget) {
  run.r.observed_seconds += dt;
  run.counted_until = in.now;
  if (minute != run.minute) {
    run.close_minute();
    run.minute = minute;
  }
  const JobHcas hcas = job_hcas(in, in.join->jobs[j]);
  double sent_now = 0;
  for (const std::size_t p : hcas.hca) sent_now += run.add_port(in, x, j, p, hcas.leaf_into);
  if (model != nullptr) {
    run.note_pairs(*model, model_generation_, in, hcas.hca, sent_now, pair_budget);
  }
}

bool ReceiptTracker::peek(std::uint64_t job_id, double now, JobReceipt& out) const {
  for (const auto& run : running_) {
    if (run->r.job_id != job_id) continue;
    out = run->finish(std::max(now, run->last_seen), true, config_);
    return true;
  }
  return false;
}

std::string ReceiptTracker::save(double now) const {
  Json jobs = Json::array();
  for (const auto& run : running_) {
    Json ports = Json::array();
    for (const auto& [id, p] : run->ports) {
      ports.push_back(Json{{"name", receipt_port_json(p.name)},
                           {"port_seconds", p.port_seconds},
                           {"stall_seconds", p.stall_seconds}});
    }
    Json culprits = Json::array();
    for (const auto& [id, seconds] : run->culprits) culprits.push_back(Json::array({id, seconds}));
    Json links = Json::array();
    for (const auto& [id, l] : run->links) {
      JobReceipt one;
      one.links.push_back(l.issue);
      links.push_back(
          Json{{"issue", receipt_json_value(one)["links"][0]}, {"last_downs", l.last_downs}});
    }
    Json rails = Json::array();
    for (const auto& [rail, sums] : run->rails) {
      rails.push_back(Json::array({sums.rail, sums.bytes_sent, sums.bytes_received}));
    }
    jobs.push_back(Json{{"receipt", receipt_json_value(run->r)},
                        {"first_seen", run->first_seen},
                        {"last_seen", run->last_seen},
                        {"listed_at", run->listed_at},
                        {"counted_until", run->counted_until},
                        {"seen_in_sweep", run->seen_in_sweep},
                        {"ports", std::move(ports)},
                        {"rails", std::move(rails)},
                        {"culprits", std::move(culprits)},
                        {"links", std::move(links)},
                        {"minute", run->minute},
                        {"minute_port_seconds", run->minute_port_seconds},
                        {"minute_stall_seconds", run->minute_stall_seconds},
                        {"known_bytes", run->known_bytes},
                        {"crossing_bytes", run->crossing_bytes},
                        {"uplink_known_bytes", run->uplink_known_bytes},
                        {"uplink_crossing_bytes", run->uplink_crossing_bytes}});
  }
  return Json{{"version", kSavedStateVersion},
              {"saved_at", now},
              {"last_polled", last_polled_},
              {"jobs", std::move(jobs)}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

// A saved number into `out`; the first one missing is the error.
void read_number(const Json& o, const char* name, double& out, std::string& error) {
  const auto it = o.find(name);
  if (it == o.end() || !it->is_number()) {
    if (error.empty()) error = std::string(name) + ": missing or not a number";
    return;
  }
  out = it->get<double>();
}

// A saved job's list `name`, null (and the error, if the first) when it is
// missing or not an array.
const Json* saved_list(const Json& j, const char* name, std::string& error) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_array()) {
    if (error.empty()) error = std::string(name) + ": missing or not an array";
    return nullptr;
  }
  return &*it;
}

bool saved_version_readable(const Json& v, std::string& error) {
  const auto version = v.find("version");
  if (version == v.end() || !version->is_number_integer() ||
      version->get<std::int64_t>() != kSavedStateVersion) {
    error = "version: this build reads version " + std::to_string(kSavedStateVersion);
    return false;
  }
  return true;
}

}  // namespace

void ReceiptTracker::Running::restore_times(const Json& j, std::string& error) {
  read_number(j, "first_seen", first_seen, error);
  read_number(j, "last_seen", last_seen, error);
  read_number(j, "listed_at", listed_at, error);
  // Saved before it was: the last sweep that listed the job.
  counted_until = last_seen;
  if (j.contains("counted_until")) read_number(j, "counted_until", counted_until, error);
  read_number(j, "minute", minute, error);
  read_number(j, "minute_port_seconds", minute_port_seconds, error);
  read_number(j, "minute_stall_seconds", minute_stall_seconds, error);
  read_number(j, "known_bytes", known_bytes, error);
  read_number(j, "crossing_bytes", crossing_bytes, error);
  // Saved before the uplinks basis existed: none counted yet.
  if (j.contains("uplink_known_bytes"))
    read_number(j, "uplink_known_bytes", uplink_known_bytes, error);
  if (j.contains("uplink_crossing_bytes"))
    read_number(j, "uplink_crossing_bytes", uplink_crossing_bytes, error);
}

namespace {

// Reads `value` as a finished receipt's `field` is read (receipt_json.h),
// into `holder`: a running receipt's saved pieces are checked by the same
// code as the store's lines, with the same error texts.
bool read_as_receipt_field(const char* field, Json value, JobReceipt& holder, std::string& error) {
  Json wrapper = receipt_json_value(holder);
  wrapper[field] = std::move(value);
  return receipt_from_json_value(wrapper, holder, error);
}

}  // namespace

void ReceiptTracker::Running::restore_ports(const Json& saved, std::string& error) {
  for (const Json& p : saved) {
    if (!p.is_object() || !p.contains("name")) {
      error = "ports: an entry without a name";
      break;
    }
    // The port's name is read as a receipt's worst port would be.
    JobReceipt holder;
    if (!read_as_receipt_field("worst_port", p["name"], holder, error)) break;
    PortLife life;
    life.name = holder.worst_port;
    read_number(p, "port_seconds", life.port_seconds, error);
    read_number(p, "stall_seconds", life.stall_seconds, error);
    ports[{life.name.guid, life.name.port}] = std::move(life);
  }
}

void ReceiptTracker::Running::restore_rails(const Json& saved, std::string& error) {
  for (const Json& rj : saved) {
    if (!rj.is_array() || rj.size() != 3 || !rj[0].is_number_integer() || !rj[1].is_number() ||
        !rj[2].is_number()) {
      error = "rails: not [rail, sent, received]";
      break;
    }
    ReceiptRail rail{rj[0].get<int>(), rj[1].get<double>(), rj[2].get<double>()};
    rails[rail.rail] = rail;
  }
}

void ReceiptTracker::Running::restore_culprits(const Json& saved, std::string& error) {
  for (const Json& c : saved) {
    if (!c.is_array() || c.size() != 2 || !c[0].is_number_unsigned() || !c[1].is_number()) {
      error = "culprits: not [job_id, seconds]";
      break;
    }
    culprits[c[0].get<std::uint64_t>()] = c[1].get<double>();
  }
}

void ReceiptTracker::Running::restore_links(const Json& saved, std::string& error) {
  for (const Json& l : saved) {
    if (!l.is_object() || !l.contains("issue")) {
      error = "links: an entry without an issue";
      break;
    }
    // The issue is read as a receipt's link issue would be.
    JobReceipt holder;
    if (!read_as_receipt_field("links", Json::array({l["issue"]}), holder, error)) break;
    LinkLife life;
    life.issue = holder.links.front();
    const auto downs = l.find("last_downs");
    if (downs != l.end() && downs->is_number_unsigned())
      life.last_downs = downs->get<std::uint32_t>();
    links[{life.issue.port.guid, life.issue.port.port}] = std::move(life);
  }
}

std::unique_ptr<ReceiptTracker::Running> ReceiptTracker::Running::restored(const Json& j,
                                                                           std::string& error) {
  auto run = std::make_unique<Running>();
  const auto receipt = j.is_object() ? j.find("receipt") : j.end();
  if (receipt == j.end()) {
    error = "jobs: an entry without a receipt";
    return nullptr;
  }
  if (!receipt_from_json_value(*receipt, run->r, error)) {
    error.insert(0, "jobs: ");
    return nullptr;
  }
  run->r.culprits.clear();
  run->r.rails.clear();
  run->r.links.clear();
  run->restore_times(j, error);
  run->seen_in_sweep = j.value("seen_in_sweep", false);
  if (const Json* ports = saved_list(j, "ports", error)) run->restore_ports(*ports, error);
  if (const Json* rails = saved_list(j, "rails", error)) run->restore_rails(*rails, error);
  if (const Json* culprits = saved_list(j, "culprits", error))
    run->restore_culprits(*culprits, error);
  if (const Json* links = saved_list(j, "links", error)) run->restore_links(*links, error);
  if (!error.empty()) return nullptr;
  return run;
}

bool ReceiptTracker::restore(const std::string& text, std::string& error) {
  error.clear();
  const Json v = Json::parse(text, nullptr, false);
  if (v.is_discarded() || !v.is_object()) {
    error = "not a JSON object";
    return false;
  }
  if (!saved_version_readable(v, error)) return false;
  double last_polled = 0;
  read_number(v, "last_polled", last_polled, error);
  const auto jobs = v.find("jobs");
  if (jobs == v.end() || !jobs->is_array()) {
    if (error.empty()) error = "jobs: missing or not an array";
    return false;
  }
  std::vector<std::unique_ptr<Running>> restored;
  for (const Json& j : *jobs) {
    auto run = Running::restored(j, error);
    if (!run) return false;
    restored.push_back(std::move(run));
  }
  if (!error.empty()) return false;
  running_ = std::move(restored);
  last_polled_ = last_polled;
  restored_ = true;
  return true;
}

ReceiptTrackerStats ReceiptTracker::stats() const {
  ReceiptTrackerStats s;
  s.running = running_.size();
  s.memory_bytes = sizeof(*this) + running_.capacity() * sizeof(running_[0]);
  for (const auto& run : running_) s.memory_bytes += run->memory_bytes();
  return s;
}

}  // namespace ibfx
