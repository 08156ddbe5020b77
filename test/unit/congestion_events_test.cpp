#include "analysis/congestion_events.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "analysis/congestion_event_state.h"
#include "test/support/fabric_builder.h"

namespace {

using ibfx::CongestionCause;
using ibfx::CongestionEvent;

// One tree of a sweep's forest: its root and victims as (node, port number).
struct Tree {
  int node = 0;
  std::uint8_t port = 0;
  CongestionCause cause = CongestionCause::kIncast;
  double score = 1;
  std::vector<std::pair<int, std::uint8_t>> victims;
};

// A 2-rail fat tree (leaves: ports 1-4 to hosts, 5-6 up; spines: 1-2 down
// to the leaves of their rail) and forests made by hand on it: the tracker
// is tested on exactly the forests it is given, whatever the forest builder
// would make of some counters.
class EventSweeps {
 public:
  EventSweeps() {
    rf_ = ibfx::test::rail_fabric(
        {.rails = 2, .leaves_per_rail = 2, .hosts_per_leaf = 4, .spines_per_rail = 2, .cores = 0});
    names_.resize(rf_.fabric.nodes.size());
    for (std::size_t n = 0; n < names_.size(); ++n) names_[n] = rf_.fabric.nodes[n].description;
    topology_ = std::make_shared<const ibfx::Topology>(
        ibfx::classify_topology(rf_.fabric, names_, ibfx::TopologyConfig{}));
    for (std::size_t n = 0; n < rf_.fabric.nodes.size(); ++n) {
      if (rf_.fabric.nodes[n].type != ibfx::NodeType::kSwitch) continue;
      for (std::uint32_t i = 0; i < rf_.fabric.nodes[n].ports.size(); ++i) {
        ibfx::PortScore ps;
        ps.node = static_cast<std::int32_t>(n);
        ps.port_index = i;
        ps.tier = topology_->tier[n];
        ps.rail = topology_->single_rail[n];
        ps.valid = true;
        index_[{static_cast<int>(n), rf_.fabric.nodes[n].ports[i].number}] = ports_.size();
        ports_.push_back(ps);
      }
    }
  }

  // Sweep at `now` (1 s interval) whose forest has `trees`.
  void sweep(double now, const std::vector<Tree>& trees,
             const std::vector<std::vector<std::uint64_t>>& jobs = {}) {
    ibfx::SweepAnalysis a;
    a.topology = topology_;
    a.interval_seconds = 1;
    a.result.ports = ports_;
    ibfx::CongestionForest& f = a.result.congestion;
    f.parent.assign(ports_.size(), ibfx::kNoPort);
    f.root.assign(ports_.size(), ibfx::kNoPort);
    for (const Tree& t : trees) {
      const std::size_t r = index_.at({t.node, t.port});
      f.root[r] = r;
      for (const auto& v : t.victims) f.root[index_.at(v)] = r;
      f.roots.push_back({r, t.cause, t.score, t.victims.size()});
    }
    tracker.observe(a, rf_.fabric, names_, now, jobs);
  }
  // A sweep with no congestion at all.
  void quiet(double now) { sweep(now, {}); }

  const ibfx::test::RailFabric& rf() const { return rf_; }
  int leaf(int rail, int i) const { return rf_.leaf[rail][i]; }
  int spine(int rail, int i) const { return rf_.spine[rail][i]; }
  std::uint64_t guid(int node) const { return rf_.fabric.nodes[node].guid; }

  ibfx::CongestionEventTracker tracker;

 private:
  ibfx::test::RailFabric rf_;
  std::vector<std::string> names_;
  std::shared_ptr<const ibfx::Topology> topology_;
  std::vector<ibfx::PortScore> ports_;
  std::map<std::pair<int, std::uint8_t>, std::size_t> index_;
};

// An incast into host0 mlx5_0 (leaf-r0-0 port 1): the spines' down ports to
// that leaf and the other leaf's uplinks wait for it.
Tree incast(const EventSweeps& s, double score, std::size_t victims = 4) {
  Tree t{s.leaf(0, 0), 1, CongestionCause::kIncast, score, {}};
  const std::vector<std::pair<int, std::uint8_t>> all{
      {s.spine(0, 0), 1}, {s.spine(0, 1), 1}, {s.leaf(0, 1), 5}, {s.leaf(0, 1), 6}};
  t.victims.assign(all.begin(), all.begin() + static_cast<long>(victims));
  return t;
}

const CongestionEvent& only(const ibfx::CongestionEventTracker& t) {
  REQUIRE(t.events()->size() == 1);
  return t.events()->front();
}

const CongestionEvent& by_id(const ibfx::CongestionEventTracker& t, std::uint64_t id) {
  for (const CongestionEvent& e : *t.events()) {
    if (e.id == id) return e;
  }
  FAIL("no event " << id);
  throw;
}

constexpr auto kIncast = static_cast<std::size_t>(CongestionCause::kIncast);

}  // namespace

TEST_CASE("an event's life: start, peak, flicker within the grace, end after it",
          "[congestion_events]") {
  EventSweeps s;
  // The first sweep has no interval yet: no evidence is not absence.
  s.tracker.observe(ibfx::SweepAnalysis{}, s.rf().fabric, {}, 999);
  CHECK(s.tracker.events()->empty());
  CHECK(s.tracker.version() == 0);

  s.sweep(1001, {incast(s, 2.0, 3)});
  {
    const CongestionEvent& e = only(s.tracker);
    CHECK(e.id == 1);
    CHECK(e.active());
    CHECK(e.root.guid == s.guid(s.leaf(0, 0)));
    CHECK(e.root.name == "leaf-r0-0");
    CHECK(e.root_port == 1);
    CHECK(e.far.name == "host0 mlx5_0");
    CHECK(e.far_port == 1);
    CHECK(e.cause == CongestionCause::kIncast);
    CHECK(e.start == 1000);  // the start of the interval it was first seen in
    CHECK(e.duration() == 1);
    CHECK(e.peak_victims == 3);
    CHECK(e.rails == std::vector<int>{0});
    CHECK(e.leaves.size() == 2);  // its own leaf and the one whose uplinks wait
    CHECK(s.tracker.counters().started[kIncast] == 1);
  }
  s.sweep(1002, {incast(s, 5.0, 4)});  // the peak
  // Noise drops the root for two sweeps: the same event goes on.
  s.quiet(1003);
  s.quiet(1004);
  CHECK(only(s.tracker).active());
  CHECK(only(s.tracker).absent_sweeps == 2);
  s.sweep(1005, {incast(s, 3.0, 2)});
  {
    const CongestionEvent& e = only(s.tracker);
    CHECK(e.id == 1);
    CHECK(e.sweeps == 3);
    CHECK(e.absent_sweeps == 0);
    CHECK(e.peak_score == 5.0);
    CHECK(e.peak_at == 1002);
    CHECK(e.peak_victims == 4);
    CHECK(s.tracker.counters().started[kIncast] == 1);  // one event, not three
  }
  // Three absent sweeps are not enough at 1 s: the grace is also 30 s.
  for (double t = 1006; t < 1035; ++t) s.quiet(t);
  CHECK(only(s.tracker).active());
  s.quiet(1035);
  const CongestionEvent& e = only(s.tracker);
  REQUIRE_FALSE(e.active());
  CHECK(*e.end == 1005);  // when it was last seen, not when the grace ran out
  CHECK(e.duration() == 5);
  CHECK(e.congested_seconds == 3);
  CHECK(s.tracker.counters().seconds[kIncast] == 3);
  // Quiet sweeps with nothing active change nothing (the same list is kept).
  const auto list = s.tracker.events();
  const auto version = s.tracker.version();
  s.quiet(1036);
  CHECK(s.tracker.events() == list);
  CHECK(s.tracker.version() == version);
}

TEST_CASE("at a long interval three absent sweeps end an event", "[congestion_events]") {
  EventSweeps s;
  s.sweep(60, {incast(s, 1)});
  s.quiet(120);
  s.quiet(180);
  CHECK(only(s.tracker).active());
  s.quiet(240);
  CHECK_FALSE(only(s.tracker).active());
}

TEST_CASE("a root that moves: the old event ends, a new one starts at once",
          "[congestion_events]") {
  EventSweeps s;
  for (double t = 1; t <= 3; ++t) s.sweep(t, {incast(s, 2)});
  // The receiver's neighbour becomes the root of the same traffic.
  Tree moved = incast(s, 2);
  moved.port = 2;
  s.sweep(4, {moved});
  REQUIRE(s.tracker.events()->size() == 2);
  CHECK(s.tracker.events()->at(0).id == 2);  // newest first
  CHECK(s.tracker.events()->at(0).root_port == 2);
  CHECK(s.tracker.events()->at(0).start == 3);
  CHECK(s.tracker.events()->at(1).id == 1);
  CHECK(s.tracker.events()->at(1).active());  // still within its grace
  for (double t = 5; t <= 40; ++t) s.sweep(t, {moved});
  CHECK(s.tracker.events()->at(0).active());
  CHECK_FALSE(s.tracker.events()->at(1).active());
  CHECK(*s.tracker.events()->at(1).end == 3);
  CHECK(s.tracker.counters().started[kIncast] == 2);
}

TEST_CASE("an unexplained root is an event only once it has persisted for the grace's sweeps",
          "[congestion_events]") {
  EventSweeps s;
  constexpr auto kUnexplained = static_cast<std::size_t>(CongestionCause::kUnexplained);
  // A spine port into the incast's leaf, a root for one sweep at the end of
  // the tree (its root already reads idle): no event, nothing counted.
  const Tree artefact{s.spine(0, 0), 1, CongestionCause::kUnexplained, 0.3, {}};
  s.sweep(1, {artefact});
  CHECK(s.tracker.events()->empty());
  CHECK(s.tracker.pending() == 1);
  CHECK(s.tracker.version() == 0);
  s.quiet(2);
  CHECK(s.tracker.pending() == 0);
  // Two sweeps, then gone: still none.
  s.sweep(3, {artefact});
  s.sweep(4, {artefact});
  s.quiet(5);
  CHECK(s.tracker.events()->empty());
  CHECK(s.tracker.counters().started[kUnexplained] == 0);
  CHECK(s.tracker.counters().seconds[kUnexplained] == 0);
  // Persisting for kPersistSweeps consecutive sweeps: one event, from the
  // first of them, with their seconds.
  Tree persistent = artefact;
  persistent.victims = {{s.leaf(0, 1), 5}};
  for (double t = 10; t < 10 + ibfx::kPersistSweeps; ++t) s.sweep(t, {persistent});
  {
    const CongestionEvent& e = only(s.tracker);
    CHECK(e.id == 1);
    CHECK(e.cause == CongestionCause::kUnexplained);
    CHECK(e.start == 9);
    CHECK(e.sweeps == ibfx::kPersistSweeps);
    CHECK(e.peak_victims == 1);
    CHECK(s.tracker.counters().started[kUnexplained] == 1);
    CHECK(s.tracker.counters().seconds[kUnexplained] == ibfx::kPersistSweeps);
    CHECK(s.tracker.pending() == 0);
  }
  // A named mechanism opens at once, taking the sweeps it was pending as
  // `unexplained` with it (the first, partial interval of a tree).
  EventSweeps t;
  Tree growing = incast(t, 0.5);
  growing.cause = CongestionCause::kUnexplained;
  t.sweep(20, {growing});
  CHECK(t.tracker.events()->empty());
  t.sweep(21, {incast(t, 4)});
  const CongestionEvent& e = only(t.tracker);
  CHECK(e.cause == CongestionCause::kIncast);
  CHECK(e.start == 19);
  CHECK(e.sweeps == 2);
  CHECK(t.tracker.counters().started[kIncast] == 1);
  CHECK(t.tracker.counters().started[kUnexplained] == 0);
  CHECK(t.tracker.counters().seconds[kIncast] == 2);
}

TEST_CASE("two trees at once are two events, each with its own rails and leaves",
          "[congestion_events]") {
  EventSweeps s;
  Tree slow{s.leaf(1, 1), 2, CongestionCause::kSlowReceiver, 3, {{s.spine(1, 0), 2}}};
  s.sweep(10, {incast(s, 4), slow});
  const auto& events = *s.tracker.events();
  REQUIRE(events.size() == 2);
  for (const CongestionEvent& e : events) {
    if (e.cause == CongestionCause::kSlowReceiver) {
      CHECK(e.rails == std::vector<int>{1});
      REQUIRE(e.leaves.size() == 1);
      CHECK(e.leaves[0].name == "leaf-r1-1");
    } else {
      CHECK(e.rails == std::vector<int>{0});
    }
  }
  CHECK(s.tracker.counters().started[static_cast<std::size_t>(CongestionCause::kSlowReceiver)] ==
        1);
}

TEST_CASE("restart: the state continues the same events and ids", "[congestion_events]") {
  EventSweeps before;
  before.sweep(100, {incast(before, 2)});
  before.sweep(101, {incast(before, 6)});
  Tree other{before.leaf(1, 0), 3, CongestionCause::kSlowReceiver, 1, {}};
  before.sweep(102, {incast(before, 3), other});
  for (double t = 103; t <= 140; ++t) before.sweep(t, {incast(before, 3)});
  REQUIRE_FALSE(by_id(before.tracker, 2).active());  // `other` ended
  REQUIRE(by_id(before.tracker, 1).active());
  const ibfx::EventTrackerState saved = before.tracker.state();

  // Back after 10 s, through the state file's format.
  ibfx::EventTrackerState loaded;
  std::string error;
  REQUIRE(ibfx::decode_event_state(ibfx::encode_event_state(saved, 140), loaded, error));
  CHECK(loaded == saved);
  EventSweeps after;
  after.tracker.restore(loaded, 150);
  CHECK(*after.tracker.events() == *before.tracker.events());
  after.sweep(150, {incast(after, 2)});
  REQUIRE(after.tracker.events()->size() == 2);  // the same event goes on
  CHECK(by_id(after.tracker, 1).active());
  CHECK(by_id(after.tracker, 1).sweeps == 42);
  CHECK(by_id(after.tracker, 1).peak_score == 6);
  CHECK(by_id(after.tracker, 1).last_seen == 150);
  CHECK(after.tracker.counters().started[kIncast] == 1);
  Tree fresh{after.leaf(0, 1), 4, CongestionCause::kIncast, 1, {}};
  after.sweep(151, {incast(after, 2), fresh});
  CHECK(after.tracker.events()->front().id == 3);  // ids never reused

  // Back after an hour: the root was gone longer than the grace, as far as
  // anyone can tell; the event ended when it was last seen.
  EventSweeps late;
  late.tracker.restore(saved, 140 + 3600);
  REQUIRE(late.tracker.events()->size() == 2);
  for (const CongestionEvent& e : *late.tracker.events()) CHECK_FALSE(e.active());
  CHECK(*by_id(late.tracker, 1).end == 140);
}

TEST_CASE("the history is bounded: the last 1,000 ended events, none over 7 days old",
          "[congestion_events]") {
  EventSweeps s;
  double t = 0;
  for (int i = 0; i < 1200; ++i) {
    s.sweep(t += 1, {incast(s, 1)});
    for (int k = 0; k < 3; ++k) s.quiet(t += 11);  // 33 s, 3 sweeps: ended
  }
  const auto& events = *s.tracker.events();
  CHECK(events.size() == ibfx::kMaxEnded);
  CHECK(events.front().id == 1200);
  CHECK(events.back().id == 201);
  CHECK(s.tracker.counters().started[kIncast] == 1200);  // the counters never forget
  // A week later only events that ended within 7 days are left.
  const double last_end = *events.front().end;
  s.quiet(last_end + ibfx::kMaxAgeSeconds - 34 * 10);
  CHECK(s.tracker.events()->size() == 11);
  s.quiet(last_end + ibfx::kMaxAgeSeconds + 1);
  CHECK(s.tracker.events()->empty());
}

TEST_CASE("an event lists at most kMaxLeavesPerEvent leaves and says when there were more",
          "[congestion_events]") {
  // 70 leaves of one rail, all waiting on one spine port.
  const auto rf = ibfx::test::rail_fabric(
      {.rails = 1, .leaves_per_rail = 70, .hosts_per_leaf = 1, .spines_per_rail = 1});
  std::vector<std::string> names(rf.fabric.nodes.size());
  auto topology = std::make_shared<const ibfx::Topology>(
      ibfx::classify_topology(rf.fabric, names, ibfx::TopologyConfig{}));
  ibfx::SweepAnalysis a;
  a.topology = topology;
  a.interval_seconds = 1;
  for (const int leaf : rf.leaf[0]) {
    ibfx::PortScore ps;
    ps.node = leaf;
    ps.port_index = 1;  // its uplink
    ps.rail = 0;
    a.result.ports.push_back(ps);
  }
  ibfx::PortScore root;
  root.node = rf.spine[0][0];
  root.port_index = 0;
  a.result.ports.push_back(root);
  const std::size_t r = a.result.ports.size() - 1;
  a.result.congestion.root.assign(a.result.ports.size(), r);
  a.result.congestion.roots.push_back({r, CongestionCause::kOversubscribed, 70, 70});
  ibfx::CongestionEventTracker tracker;
  tracker.observe(a, rf.fabric, names, 1);
  const CongestionEvent& e = only(tracker);
  CHECK(e.leaves.size() == ibfx::kMaxLeavesPerEvent);
  CHECK(e.leaves_truncated);
  CHECK(e.root.name == rf.fabric.nodes[rf.spine[0][0]].description);  // no name: the description
}

TEST_CASE("an event keeps every Slurm job its tree hurt, bounded", "[events]") {
  EventSweeps s;
  s.sweep(100, {incast(s, 2)}, {{4711, 12}});
  s.sweep(101, {incast(s, 2)}, {{12, 99}});
  s.sweep(102, {incast(s, 2)});  // no job source this sweep: nothing lost
  CHECK(only(s.tracker).jobs == std::vector<std::uint64_t>{12, 99, 4711});
  CHECK_FALSE(only(s.tracker).jobs_truncated);
  std::vector<std::uint64_t> many(ibfx::kMaxJobsPerEvent + 5);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = 10000 + i;
  s.sweep(103, {incast(s, 2)}, {many});
  CHECK(only(s.tracker).jobs.size() == ibfx::kMaxJobsPerEvent);
  CHECK(only(s.tracker).jobs_truncated);
}
