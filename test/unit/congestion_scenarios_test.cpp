// The root-or-victim analysis against the scenario driver's congestion trees,
// without a simulator: the driver's counter totals at two instants, through
// the analysis the daemon runs, against the driver's ground truth.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/root_history.h"
#include "analysis/scores.h"
#include "analysis/topology.h"
#include "routing/route_balance.h"
#include "routing/root_senders.h"
#include "routing/route_model.h"
#include "test/scenario/scenario.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fabric_gen.h"
#include "test/support/route_tables_builder.h"
#include "test/support/scenario_samples.h"

using ibfx::test::CongestionTree;
using ibfx::test::PortName;
using ibfx::test::ScenarioDriver;

namespace {

// The analysis of the interval between two instants of a scenario run.
class OfflineRun {
 public:
  explicit OfflineRun(const std::string& file)
      : driver_(
            ibfx::test::load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/" + file)),
        fabric_(ibfx::test::discovered_fabric(driver_.fabric())),
        topology_(ibfx::classify_topology(fabric_, {}, {})) {
    config_.xmit_wait.global_seconds = driver_.scenario().xmit_wait_tick_ns * 1e-9;
    routes_ = route_evidence();
  }

  // Plays the scenario up to `from`, then analyses [from, to). With
  // `history`, as SweepAnalyzer does it: the roots held from the previous
  // calls take part, and this call's roots are recorded.
  ibfx::AnalysisResult analyse(double from, double to, ibfx::RootHistory* history = nullptr) {
    while (driver_.time() < from) driver_.step();
    const auto before = ibfx::test::read_totals(driver_, fabric_);
    while (driver_.time() < to) driver_.step();
    samples_ =
        ibfx::test::samples_between(before, ibfx::test::read_totals(driver_, fabric_), to - from);
    if (history == nullptr) return ibfx::analyze(topology_, fabric_, samples_, config_, {}, &routes_);
    auto r = ibfx::analyze(topology_, fabric_, samples_, config_,
                           history->recall(fabric_, samples_), &routes_);
    history->update(fabric_, r.ports, r.congestion);
    return r;
  }

  PortName name(const ibfx::PortScore& p) const {
    const auto& node = fabric_.nodes[static_cast<std::size_t>(p.node)];
    return {node.description, node.ports[p.port_index].number};
  }
  ScenarioDriver& driver() { return driver_; }
  const ibfx::ScoreConfig& config() const { return config_; }
  // The last analyse()'s samples, and the routes it used.
  const std::vector<ibfx::PortSample>& samples() const { return samples_; }
  const ibfx::RouteModel& model() const { return *model_; }

 private:
  // The tables a subnet manager's min-hop routing makes of the fabric; a
  // routing_imbalance tree is one because the routing put every
  // destination up through its root port: its leaf's table says so.
  ibfx::RouteEvidence route_evidence() {
    ibfx::RouteTables tables = ibfx::test::min_hop_tables(fabric_);
    for (const CongestionTree& tree : driver_.congestion_trees()) {
      if (tree.cause != "routing_imbalance") continue;
      for (std::size_t n = 0; n < fabric_.nodes.size(); ++n) {
        const ibfx::FabricNode& node = fabric_.nodes[n];
        if (node.description != tree.root.node) continue;
        std::set<std::uint8_t> up;
        for (std::size_t i = 0; i < node.ports.size(); ++i) {
          if (topology_.direction[n][i] == ibfx::PortDirection::kUp) up.insert(node.ports[i].number);
        }
        auto& table = tables.switches[tables.by_guid.at(node.guid)].out_port;
        for (auto& port : table) {
          if (up.contains(port)) port = static_cast<std::uint8_t>(tree.root.port);
        }
      }
    }
    model_ = ibfx::RouteModel::build(std::make_shared<const ibfx::Fabric>(fabric_),
                                     std::make_shared<const ibfx::RouteTables>(tables));
    return ibfx::route_evidence(*model_);
  }

  ScenarioDriver driver_;
  ibfx::Fabric fabric_;
  ibfx::Topology topology_;
  ibfx::ScoreConfig config_;
  std::vector<ibfx::PortSample> samples_;
  std::shared_ptr<const ibfx::RouteModel> model_;
  ibfx::RouteEvidence routes_;
};

// The acceptance: the root ranks first with the right cause, no
// victim is ranked above it, and at least half of the victims are attributed
// to it.
void check_tree(OfflineRun& run, const ibfx::AnalysisResult& r, const CongestionTree& truth) {
  const auto& f = r.congestion;
  INFO("tree " << truth.cause << " rooted at " << truth.root.node << "[" << truth.root.port << "], "
               << truth.victims.size() << " victims");
  REQUIRE(!truth.victims.empty());
  REQUIRE(!f.roots.empty());
  const ibfx::PortScore& top = r.ports[f.roots[0].port];
  INFO("first root " << run.name(top).node << "[" << run.name(top).port << "]");
  CHECK(run.name(top) == truth.root);
  CHECK(ibfx::cause_name(f.roots[0].cause) == truth.cause);
  const std::set<PortName> victims(truth.victims.begin(), truth.victims.end());
  for (const auto& root : f.roots) CHECK_FALSE(victims.contains(run.name(r.ports[root.port])));
  std::size_t attributed = 0;
  for (std::size_t k = 0; k < r.ports.size(); ++k) {
    if (victims.contains(run.name(r.ports[k])) && f.root[k] == f.roots[0].port) ++attributed;
  }
  CHECK(attributed * 2 >= victims.size());
  CHECK(f.roots[0].victims * 2 >= victims.size());
}

}  // namespace

TEST_CASE("Congestion trees of the scenario files: the root ranks first, victims are attributed",
          "[congestion][scenario]") {
  const std::string file = GENERATE("tree_incast.yaml", "tree_slow_receiver.yaml",
                                    "tree_oversubscribed.yaml", "tree_routing_imbalance.yaml");
  INFO(file);
  OfflineRun run(file);
  const auto trees = run.driver().congestion_trees();
  REQUIRE(trees.size() == 1);
  const ibfx::AnalysisResult r = run.analyse(20, 30);
  check_tree(run, r, trees[0]);
  // Before the tree grows, nothing is a root.
  OfflineRun quiet(file);
  CHECK(quiet.analyse(2, 8).congestion.roots.empty());
}

TEST_CASE("A root that moves mid-run is followed", "[congestion][scenario]") {
  OfflineRun run("tree_moving_root.yaml");
  const auto trees = run.driver().congestion_trees();
  REQUIRE(trees.size() == 2);
  check_tree(run, run.analyse(20, 30), trees[0]);
  check_tree(run, run.analyse(50, 60), trees[1]);
  // The old root is gone: the incast leaf port is no root any more.
  const auto r = run.analyse(60, 70);
  for (const auto& root : r.congestion.roots)
    CHECK_FALSE(run.name(r.ports[root.port]) == trees[0].root);
}

TEST_CASE("A healthy baseline and the older scenario files raise no wrong root",
          "[congestion][scenario]") {
  OfflineRun run("baseline.yaml");
  const auto r = run.analyse(10, 20);
  CHECK(r.congestion.roots.empty());
  CHECK(r.congestion.stalled == 0);
}

TEST_CASE("The driver's congestion trees: ground truth and what it pushes",
          "[congestion][scenario]") {
  ScenarioDriver d(
      ibfx::test::load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/tree_incast.yaml"));
  const auto trees = d.congestion_trees();
  REQUIRE(trees.size() == 1);
  CHECK(trees[0].root == PortName{"leaf-r0-01", 1});
  CHECK(trees[0].start == 10);
  // Every spine port into leaf-r0-01 is a level-1 victim, the other leaves'
  // uplinks into those spines level 2; no HCA, no port of the root leaf.
  std::size_t spine_ports = 0, leaf_ports = 0;
  for (const PortName& v : trees[0].victims) {
    CHECK(v.node != "leaf-r0-01");
    CHECK(v.node.find("mlx5") == std::string::npos);
    spine_ports += v.node.starts_with("spine") ? 1 : 0;
    leaf_ports += v.node.starts_with("leaf") ? 1 : 0;
    CHECK(d.expected_wait_ratio(v.node, v.port, 20) ==
          Approx(v.node.starts_with("spine") ? 0.5 : 0.3));
  }
  CHECK(spine_ports > 0);
  CHECK(leaf_ports > 0);
  // The root hardly waits: its own 0.01, or the background's 0.02.
  CHECK(d.expected_wait_ratio("leaf-r0-01", 1, 20) <= 0.02);
  for (int i = 0; i < 30; ++i) d.step();
  // The root moved 98 % of line rate (capped at 100 % with the background).
  const double words = static_cast<double>(d.totals("leaf-r0-01", 1).xmit_words);
  CHECK(words * 4 / 30 > 0.7 * ibfx::test::kLineRateBytesPerSecond);

  CHECK_THROWS_WITH(
      ibfx::test::parse_scenario(
          "fabric: {servers: 8, rails: 2, tiers: 2, radix: 8}\neffects:\n"
          "  - {type: congestion_tree, cause: incast, node: leaf-r0-01, port: 5}\n"),
      Catch::Contains(
          "congestion_tree.port: the root of a incast tree must be a port into an HCA"));
  CHECK_THROWS_WITH(ibfx::test::parse_scenario(
                        "fabric: {servers: 8, rails: 2, tiers: 2, radix: 8}\neffects:\n"
                        "  - {type: congestion_tree, cause: oversubscribed, node: leaf-r0-01, "
                        "port: 1}\n"),
                    Catch::Contains("an up port"));
  CHECK_THROWS_WITH(ibfx::test::parse_scenario(
                        "fabric: {servers: 8, rails: 2, tiers: 2, radix: 8}\neffects:\n"
                        "  - {type: congestion_tree, cause: jam, node: leaf-r0-01, port: 1}\n"),
                    Catch::Contains("unknown cause \"jam\""));
}

namespace {

// Victims of `truth` attributed to the root at `root_port`.
std::size_t attributed(OfflineRun& run, const ibfx::AnalysisResult& r, const CongestionTree& truth,
                       std::size_t root_port) {
  const std::set<PortName> victims(truth.victims.begin(), truth.victims.end());
  std::size_t n = 0;
  for (std::size_t k = 0; k < r.ports.size(); ++k) {
    if (victims.contains(run.name(r.ports[k])) && r.congestion.root[k] == root_port) ++n;
  }
  return n;
}

// The rank of `port` among the exported roots, or -1.
int rank_of(OfflineRun& run, const ibfx::AnalysisResult& r, const PortName& port) {
  for (std::size_t i = 0; i < r.congestion.roots.size(); ++i) {
    if (run.name(r.ports[r.congestion.roots[i].port]) == port) return static_cast<int>(i);
  }
  return -1;
}

constexpr int kWindow = 20;  // sweeps checked, one per second

}  // namespace

TEST_CASE("Under measurement noise the verdict holds in every sweep of a window",
          "[congestion][scenario][noise]") {
  // file, expected cause of the root (the degraded link is a slow receiver
  // whose cable counts errors).
  const auto [file, cause] =
      GENERATE(table<std::string, std::string>({{"tree_noisy_incast.yaml", "incast"},
                                                {"tree_3tier_incast.yaml", "incast"},
                                                {"tree_degraded_link.yaml", "degraded_link"}}));
  INFO(file);
  OfflineRun run(file);
  const auto trees = run.driver().congestion_trees();
  REQUIRE(trees.size() == 1);
  const CongestionTree& truth = trees[0];
  ibfx::RootHistory history;
  run.analyse(0, 1, &history);
  std::size_t dips = 0;  // sweeps in which the root ran below saturation_threshold
  for (int sweep = 1; sweep < static_cast<int>(truth.start) + 2 + kWindow; ++sweep) {
    const auto r = run.analyse(sweep, sweep + 1, &history);
    if (sweep < static_cast<int>(truth.start) + 2) continue;  // the tree grows
    INFO("sweep ending at " << sweep + 1 << " s");
    REQUIRE(!r.congestion.roots.empty());
    const auto& top = r.congestion.roots[0];
    CHECK(run.name(r.ports[top.port]) == truth.root);
    CHECK(ibfx::cause_name(top.cause) == cause);
    // One tree: no victim is reported as a root of its own.
    const std::set<PortName> victims(truth.victims.begin(), truth.victims.end());
    for (const auto& root : r.congestion.roots) {
      CHECK_FALSE(victims.contains(run.name(r.ports[root.port])));
    }
    CHECK(attributed(run, r, truth, top.port) * 2 >= truth.victims.size());
    if (r.ports[top.port].utilization < run.config().congestion.saturation_threshold) ++dips;
  }
  // The incasts' roots did dip below the threshold: the noise was real.
  if (cause == "incast") CHECK(dips > 0);
}

TEST_CASE("Two concurrent trees on two rails each keep their own victims, every sweep",
          "[congestion][scenario][noise]") {
  OfflineRun run("tree_two_rails.yaml");
  const auto trees = run.driver().congestion_trees();
  REQUIRE(trees.size() == 2);
  ibfx::RootHistory history;
  for (int sweep = 0; sweep < 12 + kWindow; ++sweep) {
    const auto r = run.analyse(sweep, sweep + 1, &history);
    if (sweep < 12) continue;
    INFO("sweep ending at " << sweep + 1 << " s");
    for (const CongestionTree& truth : trees) {
      INFO(truth.cause << " at " << truth.root.node << "[" << truth.root.port << "], "
                       << truth.victims.size() << " victims");
      const int rank = rank_of(run, r, truth.root);
      REQUIRE(rank >= 0);
      CHECK(rank < 2);
      const auto& root = r.congestion.roots[static_cast<std::size_t>(rank)];
      CHECK(ibfx::cause_name(root.cause) == truth.cause);
      CHECK(attributed(run, r, truth, root.port) * 2 >= truth.victims.size());
    }
  }
}

TEST_CASE("A root that moves under noise: the new one ranks first within 2 sweeps",
          "[congestion][scenario][noise]") {
  OfflineRun run("tree_noisy_moving_root.yaml");
  const auto trees = run.driver().congestion_trees();
  REQUIRE(trees.size() == 2);
  const auto move = static_cast<int>(trees[1].start);
  ibfx::RootHistory history;
  for (int sweep = 0; sweep < move + kWindow; ++sweep) {
    const auto r = run.analyse(sweep, sweep + 1, &history);
    INFO("sweep ending at " << sweep + 1 << " s");
    if (sweep >= 12 && sweep < move) {
      REQUIRE(!r.congestion.roots.empty());
      CHECK(run.name(r.ports[r.congestion.roots[0].port]) == trees[0].root);
    } else if (sweep >= move + 1) {  // the second sweep after the move, and on
      REQUIRE(!r.congestion.roots.empty());
      CHECK(run.name(r.ports[r.congestion.roots[0].port]) == trees[1].root);
      CHECK(rank_of(run, r, trees[0].root) == -1);
      CHECK(attributed(run, r, trees[1], r.congestion.roots[0].port) * 2 >=
            trees[1].victims.size());
    }
  }
}

TEST_CASE("Without the history a dip below the threshold loses the root, with it not",
          "[congestion][scenario][noise]") {
  // The same noisy incast, with and without RootHistory: the evidence rule
  // alone already names the dipped root as parent; holding keeps it a root
  // at the held thresholds and its cause stays incast.
  OfflineRun run("tree_noisy_incast.yaml");
  const CongestionTree truth = run.driver().congestion_trees()[0];
  ibfx::RootHistory history;
  std::size_t held = 0;
  for (int sweep = 0; sweep < 12 + kWindow; ++sweep) {
    const auto r = run.analyse(sweep, sweep + 1, &history);
    if (sweep < 12 || r.congestion.roots.empty()) continue;
    if (r.congestion.roots[0].held) ++held;
  }
  CHECK(held >= kWindow - 1);
  CHECK(history.size() >= 1);
}

TEST_CASE("An incast's senders are the HCAs that feed it, first by bytes, and its victims",
          "[congestion][scenario][routes]") {
  OfflineRun run("tree_incast_senders.yaml");
  const auto trees = run.driver().congestion_trees();
  REQUIRE(trees.size() == 1);
  const CongestionTree& truth = trees[0];
  const auto r = run.analyse(20, 30);
  check_tree(run, r, truth);
  // The HCAs named as senders and as stalled wait in the tree: attributed to its root.
  const std::set<PortName> hcas{{"gpu0005 mlx5_0", 1},
                                {"gpu0006 mlx5_0", 1},
                                {"gpu0007 mlx5_0", 1},
                                {"gpu0008 mlx5_0", 1}};
  std::size_t in_tree = 0;
  for (std::size_t k = 0; k < r.ports.size(); ++k) {
    if (hcas.contains(run.name(r.ports[k])) && r.congestion.root[k] == r.congestion.roots[0].port)
      ++in_tree;
  }
  CHECK(in_tree == hcas.size());

  ibfx::SenderCache cache;
  const auto senders =
      ibfx::senders_of_roots(run.model(), cache, r.ports, run.samples(), r.congestion);
  REQUIRE(!senders.empty());
  REQUIRE(senders[0].root == 0);
  // Every HCA port of the fabric but the receiver routes through the root:
  // 8 servers' 2 HCAs and the management node's.
  CHECK(senders[0].sources == 8 * 2 + 1 - 1);
  REQUIRE(senders[0].top.size() >= 4);
  std::set<std::string> first_three;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& s = senders[0].top[i];
    REQUIRE(s.port != ibfx::kNoPort);
    first_three.insert(run.name(r.ports[s.port]).node);
  }
  CHECK(first_three == std::set<std::string>{"gpu0005 mlx5_0", "gpu0006 mlx5_0", "gpu0007 mlx5_0"});
  // The stalled HCA sends little: not among the first.
  CHECK(senders[0].top[3].bytes_per_second < 0.6 * senders[0].top[2].bytes_per_second);
}
