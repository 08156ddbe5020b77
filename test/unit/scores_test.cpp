#include "analysis/scores.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "analysis/topology.h"
#include "config/config.h"
#include "test/support/fabric_builder.h"

using ibfx::PortDirection;
using ibfx::Tier;
using ibfx::test::rail_fabric;
using ibfx::test::RailFabric;

namespace {

constexpr double kScoresInterval = 10.0;  // seconds between the two readings

// One sample per linked port, with the stall ratio `w(node, port index)`
// turned into HDR ticks, and 1000 words sent.
std::vector<ibfx::PortSample> samples_for(const ibfx::Fabric& f,
                                          const std::function<double(int, std::size_t)>& w) {
  // Builder nodes are of no known device: the IBA unit, 8 bytes per lane per
  // count, over 4x HDR's 25e9 bytes/s.
  constexpr double tick = 8.0 * 4 / 25e9;
  std::vector<ibfx::PortSample> out;
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    for (std::size_t j = 0; j < f.nodes[i].ports.size(); ++j) {
      if (!f.nodes[i].ports[j].linked()) continue;
      ibfx::PortSample s;
      s.node = static_cast<std::int32_t>(i);
      s.port_index = static_cast<std::uint32_t>(j);
      s.xmit_wait_ticks = static_cast<std::uint64_t>(
          std::llround(w(static_cast<int>(i), j) * kScoresInterval / tick));
      s.xmit_data_words = 1000;
      s.interval_seconds = kScoresInterval;
      out.push_back(s);
    }
  }
  return out;
}

std::size_t port_towards(const ibfx::Fabric& f, int node, int remote) {
  const auto& ports = f.nodes[static_cast<std::size_t>(node)].ports;
  for (std::size_t j = 0; j < ports.size(); ++j) {
    if (ports[j].remote_node == remote) return j;
  }
  FAIL("no link");
  return 0;
}

double max_score(const ibfx::AnalysisResult& r) {
  double m = -1e9;
  for (const auto& p : r.ports) m = std::max(m, p.score);
  return m;
}

std::string scores_parse_error(const std::string& yaml) {
  try {
    ibfx::parse_score_config(YAML::Load(yaml)["scores"], "s.yaml");
  } catch (const ibfx::ConfigError& e) {
    return e.what();
  }
  return "";
}

const ibfx::test::RailFabricShape kScoresShape{
    .rails = 2, .leaves_per_rail = 4, .hosts_per_leaf = 8, .spines_per_rail = 4, .cores = 0};

}  // namespace

TEST_CASE("median, MAD and percentiles", "[scores]") {
  std::vector<double> v{5, 1, 3, 2, 4};
  CHECK(ibfx::median_of(v) == 3);
  v = {4, 1, 3, 2};
  CHECK(ibfx::median_of(v) == 2.5);
  v = {1, 2, 3, 4, 100};
  CHECK(ibfx::scaled_mad(v, 3) == Approx(1.4826));
  v = {0, 10};
  CHECK(ibfx::percentile_of(v, 0.5) == Approx(5));
  CHECK(ibfx::percentile_of(v, 0.99) == Approx(9.9));
  v.clear();
  CHECK(ibfx::median_of(v) == 0);
  CHECK(ibfx::percentile_of(v, 0.5) == 0);
}

TEST_CASE("stall ratio, clamping and skipped ports", "[scores]") {
  RailFabric rf = rail_fabric(
      {.rails = 1, .leaves_per_rail = 1, .hosts_per_leaf = 2, .spines_per_rail = 1, .cores = 0});
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  std::vector<ibfx::PortSample> s = samples_for(rf.fabric, [](int, std::size_t) { return 0.25; });
  REQUIRE(s.size() == 6);
  s[0].xmit_wait_ticks = 1ULL << 50;  // more ticks than the interval holds
  s[1].interval_seconds = 0;
  s[2].has_xmit_wait = false;
  // No link speed: neither the stall time nor the utilisation is known.
  ibfx::FabricPort& unknown =
      rf.fabric.nodes[static_cast<std::size_t>(s[3].node)].ports[s[3].port_index];
  unknown.speed_ext_active = 0;
  unknown.speed_active = 0;
  const ibfx::AnalysisResult r = ibfx::analyze(topo, rf.fabric, s, {});
  CHECK(r.clamped == 1);
  CHECK(r.skipped == 3);
  CHECK(r.ports[0].valid);
  CHECK(r.ports[0].clamped);
  CHECK(r.ports[0].stall == 1.0);
  CHECK_FALSE(r.ports[1].valid);
  CHECK(r.ports[4].stall == Approx(0.25).epsilon(1e-6));
  CHECK(r.top_ports.size() == 3);
  CHECK_FALSE(r.ports[3].utilization_valid);
  CHECK_FALSE(r.ports[1].utilization_valid);
  // U: 1000 words x 4 bytes over 10 s, of 4x HDR's 25e9 bytes/s.
  CHECK(r.ports[4].utilization_valid);
  CHECK(r.ports[4].utilization == Approx(4000 / kScoresInterval / 25e9));

  SECTION("samples outside the fabric are skipped") {
    std::vector<ibfx::PortSample> bad(2);
    bad[0].node = 99;
    bad[1].node = 0;
    bad[1].port_index = 77;
    const ibfx::AnalysisResult rb = ibfx::analyze(topo, rf.fabric, bad, {});
    CHECK(rb.skipped == 2);
    CHECK(rb.top_ports.empty());
  }
  SECTION("a topology of another (smaller) fabric is not indexed past its end") {
    const ibfx::AnalysisResult rt = ibfx::analyze(ibfx::Topology{}, rf.fabric, s, {});
    CHECK(rt.skipped == s.size());
    REQUIRE(rt.worst_paths.size() == 1);
    CHECK(rt.worst_paths[0].hops.empty());
  }
}

TEST_CASE("no hotspot under uniform load with noise", "[scores]") {
  const RailFabric rf = rail_fabric(kScoresShape);
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(-0.01, 0.01);
    const double load = 0.05 * seed;  // 5% .. 100% stalled
    const ibfx::AnalysisResult r = ibfx::analyze(
        topo, rf.fabric,
        samples_for(rf.fabric,
                    [&](int, std::size_t) { return std::clamp(load + noise(rng), 0.0, 1.0); }),
        {});
    INFO("seed " << seed);
    CHECK(max_score(r) < 3.0);
    CHECK(r.hot_ports == 0);
  }
  SECTION("gaussian noise of 0.3% at 30% load") {
    std::mt19937 rng(7);
    std::normal_distribution<double> noise(0.30, 0.003);
    const ibfx::AnalysisResult r = ibfx::analyze(
        topo, rf.fabric, samples_for(rf.fabric, [&](int, std::size_t) { return noise(rng); }), {});
    CHECK(max_score(r) < 3.0);
  }
}

TEST_CASE("a single hot port ranks first and does not hide itself", "[scores]") {
  const RailFabric rf = rail_fabric(kScoresShape);
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  const int leaf = rf.leaf[1][2];
  const std::size_t hot = port_towards(rf.fabric, leaf, rf.spine[1][3]);
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> noise(0.28, 0.32);
  const ibfx::AnalysisResult r = ibfx::analyze(
      topo, rf.fabric,
      samples_for(
          rf.fabric,
          [&](int node, std::size_t j) { return node == leaf && j == hot ? 0.6 : noise(rng); }),
      {});
  REQUIRE_FALSE(r.top_ports.empty());
  const ibfx::PortScore& top = r.ports[r.top_ports[0]];
  CHECK(top.node == leaf);
  CHECK(top.port_index == hot);
  CHECK(top.tier == Tier::kLeaf);
  CHECK(top.rail == 1);
  CHECK(top.direction == PortDirection::kUp);
  CHECK(top.peers == 16);  // 4 rail-1 leaves x 4 uplinks
  CHECK(top.score > 10);
  CHECK(r.hot_ports == 1);
  CHECK(r.top_ports.size() == 20);

  SECTION("in a peer group of five, where a mean/stddev z-score cannot exceed 1.8") {
    // Spine down ports of rail 0 with 5 leaves per spine: the classical
    // z-score of one outlier among n is bounded by (n-1)/sqrt(n).
    const RailFabric small = rail_fabric(
        {.rails = 1, .leaves_per_rail = 5, .hosts_per_leaf = 2, .spines_per_rail = 1, .cores = 0});
    const ibfx::Topology t = ibfx::classify_topology(small.fabric, {}, {});
    const int spine = small.spine[0][0];
    const std::size_t port = port_towards(small.fabric, spine, small.leaf[0][3]);
    const ibfx::AnalysisResult rs =
        ibfx::analyze(t, small.fabric,
                      samples_for(small.fabric,
                                  [&](int node, std::size_t j) {
                                    if (node != spine) return 0.1;
                                    return j == port ? 0.9 : 0.1 + 0.002 * static_cast<double>(j);
                                  }),
                      {});
    const ibfx::PortScore& p = rs.ports[rs.top_ports[0]];
    CHECK(p.node == spine);
    CHECK(p.port_index == port);
    CHECK(p.peers == 5);
    CHECK(p.score > 3.0);
  }
}

TEST_CASE("a hot switch ranks first among switches", "[scores]") {
  const RailFabric rf = rail_fabric(kScoresShape);
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  const int hot_leaf = rf.leaf[0][1];
  const int other_leaf = rf.leaf[0][3];
  const std::size_t one_port = port_towards(rf.fabric, other_leaf, rf.spine[0][0]);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noise(0.04, 0.06);
  const ibfx::AnalysisResult r =
      ibfx::analyze(topo, rf.fabric,
                    samples_for(rf.fabric,
                                [&](int node, std::size_t j) {
                                  if (node == hot_leaf) return 0.5;
                                  if (node == other_leaf && j == one_port)
                                    return 0.9;  // one hot port only
                                  return noise(rng);
                                }),
                    {});
  REQUIRE(r.switches.size() == 16);
  CHECK(r.switches[0].node == hot_leaf);
  CHECK(r.switches[0].tier == Tier::kLeaf);
  CHECK(r.switches[0].rail == 0);
  CHECK(r.switches[0].hot_ports == 12);
  CHECK(r.switches[0].score > 3.0);
  // Ranking switches by their hottest port would have put other_leaf first.
  const auto other = std::find_if(r.switches.begin(), r.switches.end(),
                                  [&](const ibfx::SwitchScore& x) { return x.node == other_leaf; });
  REQUIRE(other != r.switches.end());
  CHECK(other->max_port_score > r.switches[0].max_port_score);
  CHECK(other->hot_ports == 1);
  CHECK(other->score < 3.0);
}

TEST_CASE("p99/p50 separates heavy tails from uniform load", "[scores]") {
  const RailFabric rf = rail_fabric(
      {.rails = 1, .leaves_per_rail = 8, .hosts_per_leaf = 16, .spines_per_rail = 4, .cores = 0});
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  auto hca_tail = [](const ibfx::AnalysisResult& r) {
    for (const auto& t : r.tails) {
      if (t.tier == Tier::kHca && t.rail == 0) return t;
    }
    FAIL("no hca tail");
    return ibfx::TailScore{};
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const ibfx::AnalysisResult heavy =
      ibfx::analyze(topo, rf.fabric,
                    samples_for(rf.fabric,
                                [&](int, std::size_t) {
                                  // Pareto, alpha 1.2, scale 0.02: most ports calm, a few stalled.
                                  return std::min(1.0, 0.02 / std::pow(1.0 - u(rng), 1.0 / 1.2));
                                }),
                    {});
  const ibfx::AnalysisResult flat = ibfx::analyze(
      topo, rf.fabric, samples_for(rf.fabric, [&](int, std::size_t) { return 0.2 + 0.1 * u(rng); }),
      {});
  const ibfx::TailScore h = hca_tail(heavy);
  const ibfx::TailScore f = hca_tail(flat);
  CHECK(h.ports == 128);
  CHECK(h.ratio > 5);
  CHECK(f.ratio < 1.5);
  CHECK(f.ratio >= 1.0);
  CHECK(f.p50 == Approx(0.25).margin(0.02));

  SECTION("an idle fabric does not divide by zero") {
    const ibfx::AnalysisResult idle = ibfx::analyze(
        topo, rf.fabric, samples_for(rf.fabric, [](int, std::size_t) { return 0.0; }), {});
    CHECK(hca_tail(idle).ratio == 0);
    CHECK(max_score(idle) == 0);
  }
}

TEST_CASE("worst up-down path", "[scores]") {
  const RailFabric rf = rail_fabric(
      {.rails = 2, .leaves_per_rail = 2, .hosts_per_leaf = 2, .spines_per_rail = 2, .cores = 0});
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  const int src = rf.hca[0][0];
  const int leaf0 = rf.leaf[0][0];
  const int spine = rf.spine[0][1];
  const int leaf1 = rf.leaf[0][1];
  const int dst = rf.hca[3][0];
  auto hot = [&](int node, std::size_t j) {
    if (node == src) return 0.2;
    if (node == leaf0 && j == port_towards(rf.fabric, leaf0, spine)) return 0.5;
    if (node == spine && j == port_towards(rf.fabric, spine, leaf1)) return 0.4;
    if (node == leaf1 && j == port_towards(rf.fabric, leaf1, dst)) return 0.1;
    return 0.0;
  };
  const ibfx::AnalysisResult r = ibfx::analyze(topo, rf.fabric, samples_for(rf.fabric, hot), {});
  REQUIRE(r.worst_paths.size() == 3);  // fabric, rail 0, rail 1
  const ibfx::WorstPath& w = r.worst_paths[0];
  CHECK(w.rail == ibfx::kNoRail);
  CHECK(w.stall_sum == Approx(1.2).epsilon(1e-6));
  CHECK(w.stalled_seconds == Approx(1.2 * kScoresInterval).epsilon(1e-6));
  REQUIRE(w.hops.size() == 4);
  CHECK(w.hops[0].node == src);
  CHECK(w.hops[1].node == leaf0);
  CHECK(w.hops[2].node == spine);
  CHECK(w.hops[3].node == leaf1);
  CHECK(w.hops[3].port_index == port_towards(rf.fabric, leaf1, dst));
  CHECK(r.worst_paths[1].rail == 0);
  CHECK(r.worst_paths[1].stall_sum == Approx(1.2).epsilon(1e-6));
  CHECK(r.worst_paths[2].rail == 1);
  CHECK(r.worst_paths[2].stall_sum == 0);

  SECTION("3-tier paths climb to a core") {
    const RailFabric t3 = rail_fabric(
        {.rails = 2, .leaves_per_rail = 1, .hosts_per_leaf = 1, .spines_per_rail = 1, .cores = 1});
    const ibfx::Topology tt = ibfx::classify_topology(t3.fabric, {}, {});
    const int core = t3.core[0];
    const int s0 = t3.spine[0][0];
    const ibfx::AnalysisResult r3 =
        ibfx::analyze(tt, t3.fabric,
                      samples_for(t3.fabric,
                                  [&](int node, std::size_t j) {
                                    if (node == s0 && j == port_towards(t3.fabric, s0, core))
                                      return 0.3;
                                    if (node == core) return 0.3;
                                    return 0.01;
                                  }),
                      {});
    const ibfx::WorstPath& p = r3.worst_paths[0];
    REQUIRE(p.hops.size() == 6);  // hca, leaf, spine, core, spine, leaf
    CHECK(p.hops[3].node == core);
    CHECK(p.stall_sum == Approx(0.01 * 4 + 0.6).epsilon(1e-6));
  }
}

TEST_CASE("aggregates by rail, switch and tier", "[scores]") {
  const RailFabric rf = rail_fabric(
      {.rails = 2, .leaves_per_rail = 2, .hosts_per_leaf = 2, .spines_per_rail = 1, .cores = 0});
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  std::vector<ibfx::PortSample> s = samples_for(
      rf.fabric, [&](int node, std::size_t) { return node == rf.leaf[1][1] ? 0.4 : 0.1; });
  for (auto& x : s) x.error_count = 1;
  const ibfx::AnalysisResult r = ibfx::analyze(topo, rf.fabric, s, {});
  REQUIRE(r.by_rail.size() == 2);
  // Rail 1: 4 HCA ports, 2 leaves x (2 down + 1 up), 1 spine x 2 down = 12 ports.
  CHECK(r.by_rail[1].rail == 1);
  CHECK(r.by_rail[1].ports == 12);
  CHECK(r.by_rail[1].xmit_bytes == 12 * 4000);
  CHECK(r.by_rail[1].errors == 12);
  CHECK(r.by_rail[1].max_stall == Approx(0.4).epsilon(1e-6));
  CHECK(r.by_rail[1].mean_stall == Approx((3 * 0.4 + 9 * 0.1) / 12).epsilon(1e-6));
  CHECK(r.by_rail[0].max_stall == Approx(0.1).epsilon(1e-6));

  REQUIRE(r.by_switch.size() == 6);
  int leaves = 0;
  for (const auto& a : r.by_switch) {
    if (a.tier != Tier::kLeaf) continue;
    ++leaves;
    CHECK(a.rail >= 0);
    CHECK(a.ports == 3);
    if (a.node == rf.leaf[1][1]) CHECK(a.mean_stall == Approx(0.4).epsilon(1e-6));
  }
  CHECK(leaves == 4);
  REQUIRE(r.by_tier.size() == 3);
  CHECK(r.by_tier[0].tier == Tier::kHca);
  CHECK(r.by_tier[0].ports == 8);
  CHECK(r.by_tier[2].tier == Tier::kSpine);
  CHECK(r.by_tier[2].ports == 4);
}

TEST_CASE("make_port_sample takes deltas of totals", "[scores]") {
  std::array<std::uint64_t, ibfx::kCounterCount> before{};
  std::array<std::uint64_t, ibfx::kCounterCount> after{};
  auto at = [](auto& a, ibfx::Counter c) -> std::uint64_t& {
    return a[static_cast<std::size_t>(c)];
  };
  at(before, ibfx::Counter::kTransmitWait) = 100;
  at(after, ibfx::Counter::kTransmitWait) = 350;
  at(after, ibfx::Counter::kTransmitDataBytes) = 10;
  at(after, ibfx::Counter::kSymbolErrors) = 2;
  at(after, ibfx::Counter::kExcessiveBufferOverrunErrors) = 3;
  at(after, ibfx::Counter::kVl15Dropped) = 50;  // not a link error
  at(before, ibfx::Counter::kLinkDowned) = 9;   // went backwards: 0
  const ibfx::PortSample s = ibfx::make_port_sample(3, 1, before, after, 2.5);
  CHECK(s.node == 3);
  CHECK(s.port_index == 1);
  CHECK(s.xmit_wait_ticks == 250);
  CHECK(s.xmit_data_words == 10);
  CHECK(s.error_count == 5);
  CHECK(s.interval_seconds == 2.5);
}

TEST_CASE("parse_score_config", "[scores]") {
  const ibfx::ScoreConfig c = ibfx::parse_score_config(YAML::Load(R"(scores:
  tick_multiplier: 32
  tick_seconds_by_speed:
    HDR: 1.5e-9
  mad_floor: 0.02
  hot_threshold: 4
  top_k: 5
  tail_floor: 0.05
)")["scores"],
                                                       "s.yaml");
  CHECK(c.xmit_wait.multiplier == 32);
  CHECK(c.xmit_wait.per_speed_seconds.at("HDR") == Approx(1.5e-9));
  CHECK(c.mad_floor == 0.02);
  CHECK(c.hot_threshold == 4);
  CHECK(c.top_k == 5);
  CHECK(c.tail_floor == 0.05);
  CHECK(ibfx::parse_score_config(YAML::Node(), "s").top_k == 20);

  CHECK(scores_parse_error("scores:\n  top_k: -1\n") ==
        "s.yaml:2: scores.top_k: -1 is out of range [0, 100000]");
  CHECK(scores_parse_error("scores:\n  tick_seconds: fast\n") ==
        "s.yaml:2: scores.tick_seconds: expected a number, got \"fast\"");
  CHECK(scores_parse_error("scores:\n  tick_seconds_by_speed:\n    GDR: 1e-9\n")
            .starts_with("s.yaml:3: scores.tick_seconds_by_speed: unknown link speed \"GDR\""));
  CHECK(scores_parse_error("scores:\n  mad_floor: [1]\n") ==
        "s.yaml:2: scores.mad_floor: expected a single value, got a list");
  CHECK(scores_parse_error("scores:\n  floor: 1\n") == "s.yaml:2: scores.floor: unknown key");
}
