// Trees that start and end at arbitrary instants inside a sweep interval, on
// switches read at skewed instants, through the daemon's analysis chain
// (RootHistory, the forest, the event tracker) without a simulator: every
// root is one event, and nothing else is (docs/scores.md, "Over sweeps" and
// "Congestion events").
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/congestion_events.h"
#include "analysis/root_history.h"
#include "analysis/scores.h"
#include "analysis/sweep_analyzer.h"
#include "analysis/topology.h"
#include "test/scenario/scenario.h"
#include "test/sim/discovered_fabric.h"
#include "test/support/scenario_samples.h"

using ibfx::test::CongestionTree;
using ibfx::test::PortName;
using ibfx::test::ScenarioDriver;

namespace {

// Sweeps a scenario once per second as the daemon does, each node read at
// its own instant (t + its offset): a node read late covers the end of a
// flow in one sweep that a node read early covers in the next.
class SkewedSweeps {
 public:
  SkewedSweeps(const std::string& yaml, std::uint64_t seed, double max_skew)
      : driver_(ibfx::test::parse_scenario(yaml)),
        fabric_(ibfx::test::discovered_fabric(driver_.fabric())),
        topology_(
            std::make_shared<const ibfx::Topology>(ibfx::classify_topology(fabric_, {}, {}))) {
    config_.xmit_wait.global_seconds = driver_.scenario().xmit_wait_tick_ns * 1e-9;
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<double> offset(0, max_skew);
    for (std::size_t n = 0; n < fabric_.nodes.size(); ++n) order_.emplace_back(offset(random), n);
    std::sort(order_.begin(), order_.end());
  }

  // The sweep that starts at `t` (integer seconds): every node read at
  // t + its offset, analysed against the previous sweep.
  const ibfx::AnalysisResult& sweep(double t) {
    ibfx::test::ScenarioTotals now;
    for (const auto& [offset, n] : order_) {
      while (driver_.time() < t + offset - 1e-9) driver_.step();
      ibfx::test::read_node_totals(driver_, fabric_, n, now);
    }
    if (!previous_.empty()) {
      std::vector<ibfx::PortSample> samples =
          ibfx::test::samples_between(previous_, now, t - previous_t_);
      ibfx::SweepAnalysis a;
      a.topology = topology_;
      a.interval_seconds = t - previous_t_;
      a.result =
          ibfx::analyze(*topology_, fabric_, samples, config_, history_.recall(fabric_, samples));
      history_.update(fabric_, a.result.ports, a.result.congestion);
      a.samples = std::move(samples);
      events_.observe(a, fabric_, {}, t);
      last_ = std::move(a.result);
    }
    previous_ = std::move(now);
    previous_t_ = t;
    return last_;
  }

  PortName name(std::size_t k) const {
    const auto& p = last_.ports[k];
    const auto& node = fabric_.nodes[static_cast<std::size_t>(p.node)];
    return {node.description, node.ports[p.port_index].number};
  }
  ScenarioDriver& driver() { return driver_; }
  const ibfx::CongestionEventTracker& events() const { return events_; }
  const ibfx::AnalysisResult& last() const { return last_; }

 private:
  ScenarioDriver driver_;
  ibfx::Fabric fabric_;
  std::shared_ptr<const ibfx::Topology> topology_;
  ibfx::ScoreConfig config_;
  std::vector<std::pair<double, std::size_t>> order_;  // (offset, node), by offset
  ibfx::test::ScenarioTotals previous_;
  double previous_t_ = 0;
  ibfx::RootHistory history_;
  ibfx::CongestionEventTracker events_;
  ibfx::AnalysisResult last_;
};

std::string fabric_yaml(int tiers, double tick, double jitter, std::uint64_t seed = 5) {
  std::ostringstream out;
  out << "name: transitions\nseed: " << seed << "\nfabric: {servers: " << (tiers == 3 ? 16 : 8)
      << ", rails: 2, tiers: " << tiers << ", radix: 8}\nduration: 60\ntick: " << tick
      << "\njitter: " << jitter << "\neffects:\n  - {type: allreduce, load: 0.4}\n";
  return out.str();
}

std::string tree_yaml(const std::string& cause, const std::string& node, int port, double start,
                      double end, double load = 0.98) {
  std::ostringstream out;
  out << "  - {type: congestion_tree, cause: " << cause << ", node: " << node << ", port: " << port
      << ", start: " << start << ", end: " << end;
  if (cause == "incast") out << ", load: " << load;
  out << "}\n";
  return out.str();
}

// Sweeps `run` from 0 to `until`; in each sweep whose interval lies wholly
// inside a tree (no node read before its start or after its end), that
// tree's root ranks among the roots and none of its victims is a root.
void play(SkewedSweeps& run, int until, double max_skew) {
  const auto trees = run.driver().congestion_trees();
  for (int t = 0; t <= until; ++t) {
    const auto& r = run.sweep(t);
    if (t == 0) continue;
    std::set<PortName> roots;
    for (const auto& root : r.congestion.roots) roots.insert(run.name(root.port));
    for (const CongestionTree& truth : trees) {
      if (t - 1 < truth.start + 1 || t + max_skew > truth.end) continue;  // not steady
      INFO("steady sweep [" << t - 1 << ", " << t << "): " << truth.cause << " at "
                            << truth.root.node << "[" << truth.root.port << "]");
      CHECK(roots.contains(truth.root));
      for (const PortName& v : truth.victims) CHECK_FALSE(roots.contains(v));
    }
  }
}

// Every tree of the scenario is exactly one event at its root with its
// cause, nothing else is an event, and the counters say the same.
void check_one_event_per_tree(SkewedSweeps& run) {
  const auto trees = run.driver().congestion_trees();
  const auto& events = *run.events().events();
  std::ostringstream listed;
  for (const auto& e : events) {
    listed << "event " << e.id << ": " << e.root.name << "[" << int{e.root_port} << "] "
           << ibfx::cause_name(e.cause) << " " << e.sweeps << " sweeps, " << e.peak_victims
           << " victims\n";
  }
  INFO(listed.str());
  CHECK(events.size() == trees.size());
  std::uint64_t started = 0;
  for (const std::uint64_t n : run.events().counters().started) started += n;
  CHECK(started == events.size());
  for (const CongestionTree& truth : trees) {
    INFO(truth.cause << " at " << truth.root.node << "[" << truth.root.port << "]");
    const auto n = std::count_if(events.begin(), events.end(), [&](const auto& e) {
      return e.root.name == truth.root.node && e.root_port == truth.root.port &&
             ibfx::cause_name(e.cause) == truth.cause;
    });
    CHECK(n == 1);
  }
}

}  // namespace

TEST_CASE("A tree's last interval at any fraction of its steady values belongs to the tree",
          "[congestion][transitions]") {
  // The flows end at 20 + fraction: the sweep [20, 21) sees the root's U and
  // the victims' W at that fraction of their steady values. Every node is
  // read at the same instant here; the skew has its own test below.
  const auto [cause, node, port] = GENERATE(table<std::string, std::string, int>(
      {{"incast", "leaf-r0-01", 1}, {"slow_receiver", "leaf-r1-02", 3}}));
  const int tiers = GENERATE(2, 3);
  for (int step = 1; step <= 19; ++step) {
    const double fraction = 0.05 * step;
    INFO(cause << " on " << tiers << " tiers, last interval at " << fraction);
    SkewedSweeps run(fabric_yaml(tiers, 0.05, 0) + tree_yaml(cause, node, port, 5, 20 + fraction),
                     1, 0);
    for (int t = 0; t <= 28; ++t) {
      const auto& r = run.sweep(t);
      if (t < 2) continue;
      // Whatever the fraction, the only root is the tree's own.
      for (const auto& root : r.congestion.roots) {
        INFO("sweep [" << t - 1 << ", " << t << "): root " << run.name(root.port).node << "["
                       << run.name(root.port).port << "] " << ibfx::cause_name(root.cause));
        CHECK(run.name(root.port) == PortName{node, port});
      }
    }
    check_one_event_per_tree(run);
  }
}

TEST_CASE("A tree's first interval at any fraction opens one event, at its root",
          "[congestion][transitions]") {
  const int tiers = GENERATE(2, 3);
  for (int step = 1; step <= 19; ++step) {
    const double fraction = 0.05 * step;
    INFO("incast on " << tiers << " tiers, first interval at " << 1 - fraction);
    SkewedSweeps run(
        fabric_yaml(tiers, 0.05, 0) + tree_yaml("incast", "leaf-r0-01", 1, 5 + fraction, 16), 1, 0);
    play(run, 24, 0);
    check_one_event_per_tree(run);
  }
}

TEST_CASE(
    "Over many seeds: trees that start, end and move at random instants, read at skewed "
    "instants, are one event each",
    "[congestion][transitions]") {
  struct Case {
    const char* what;
    int tiers;
  };
  const auto [what, tiers] =
      GENERATE(values<Case>({{"one incast", 2},
                             {"one slow receiver", 2},
                             {"two trees at once sharing spines", 2},
                             {"a root that moves to another leaf and rail", 2},
                             {"one incast", 3}}));
  constexpr double kMaxSkew = 0.6;  // of a 1 s interval
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    std::mt19937_64 random(seed * 7919 + static_cast<std::uint64_t>(tiers));
    std::uniform_real_distribution<double> frac(0.02, 0.98);
    const double a = 6 + frac(random), b = 16 + frac(random), c = 17 + frac(random) - 1.5;
    std::string effects;
    const std::string w(what);
    if (w == "one incast") {
      effects = tree_yaml("incast", "leaf-r0-01", 1, a, b);
    } else if (w == "one slow receiver") {
      effects = tree_yaml("slow_receiver", "leaf-r1-02", 3, a, b);
    } else if (w == "two trees at once sharing spines") {
      effects = tree_yaml("incast", "leaf-r0-01", 1, a, b) +
                tree_yaml("slow_receiver", "leaf-r1-02", 3, a + frac(random) * 3, b + frac(random));
    } else {
      // The second root grows while the first decays: it starts up to 1.5 s
      // before the first ends.
      effects = tree_yaml("incast", "leaf-r0-01", 1, a, b) +
                tree_yaml("incast", "leaf-r1-02", 3, c, c + 9 + frac(random));
    }
    INFO(what << " on " << tiers << " tiers, seed " << seed << ":\n" << effects);
    SkewedSweeps run(fabric_yaml(tiers, 0.05, 0.1, seed) + effects, seed, kMaxSkew);
    play(run, 36, kMaxSkew);
    check_one_event_per_tree(run);
  }
}
