// The root-or-victim classifier on hand-built fabrics (analysis/congestion.h).
#include "analysis/congestion.h"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "analysis/scores.h"
#include "analysis/topology.h"
#include "config/config.h"
#include "test/support/fabric_builder.h"

using ibfx::CongestionCause;
using ibfx::test::rail_fabric;
using ibfx::test::RailFabric;

namespace {

constexpr double kCongestionInterval = 10.0;
constexpr double kRate = 25e9;             // 4x HDR data rate, bytes/s
constexpr double kTick = 8.0 * 4 / kRate;  // IBA unit on 4x HDR: 8 bytes per lane

using Port = std::pair<int, int>;  // (node, port index)

// A fabric's interval: W and U per port; ports not listed get the background.
struct Interval {
  double background_w = 0.02;
  double background_u = 0.3;
  std::map<Port, double> w;
  std::map<Port, double> u;

  std::vector<ibfx::PortSample> samples(const ibfx::Fabric& f) const {
    std::vector<ibfx::PortSample> out;
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
      for (std::size_t j = 0; j < f.nodes[i].ports.size(); ++j) {
        if (!f.nodes[i].ports[j].linked()) continue;
        const Port key{static_cast<int>(i), static_cast<int>(j)};
        const double wi = w.contains(key) ? w.at(key) : background_w;
        const double ui = u.contains(key) ? u.at(key) : background_u;
        ibfx::PortSample s;
        s.node = static_cast<std::int32_t>(i);
        s.port_index = static_cast<std::uint32_t>(j);
        s.xmit_wait_ticks =
            static_cast<std::uint64_t>(std::llround(wi * kCongestionInterval / kTick));
        s.xmit_data_words =
            static_cast<std::uint64_t>(std::llround(ui * kRate * kCongestionInterval / 4));
        s.interval_seconds = kCongestionInterval;
        out.push_back(s);
      }
    }
    return out;
  }
};

int towards(const ibfx::Fabric& f, int node, int remote) {
  const auto& ports = f.nodes[static_cast<std::size_t>(node)].ports;
  for (std::size_t j = 0; j < ports.size(); ++j) {
    if (ports[j].remote_node == remote) return static_cast<int>(j);
  }
  FAIL("no link");
  return -1;
}

struct Run {
  ibfx::AnalysisResult result;
  std::vector<ibfx::PortSample> samples;

  Port port(std::size_t k) const {
    return {result.ports[k].node, static_cast<int>(result.ports[k].port_index)};
  }
  // How many of `victims` the forest attributes to the root `root`.
  std::size_t attributed(Port root, const std::set<Port>& victims) const {
    const auto& f = result.congestion;
    std::size_t n = 0;
    for (std::size_t k = 0; k < result.ports.size(); ++k) {
      if (victims.contains(port(k)) && f.root[k] != ibfx::kNoPort && port(f.root[k]) == root) ++n;
    }
    return n;
  }
};

Run analyse(const ibfx::Fabric& f, const Interval& in,
            const ibfx::RouteEvidence* routes = nullptr) {
  const ibfx::Topology topo = ibfx::classify_topology(f, {}, {});
  Run r;
  r.samples = in.samples(f);
  r.result = ibfx::analyze(topo, f, r.samples, {}, {}, routes);
  return r;
}

const ibfx::test::RailFabricShape kCongestionShape{
    .rails = 2, .leaves_per_rail = 4, .hosts_per_leaf = 8, .spines_per_rail = 4, .cores = 0};

// The congestion tree of a root into leaf[0][0]: every rail-0 spine's port
// into that leaf (W `w1`) and the other rail-0 leaves' uplinks into those
// spines (W `w2`).
std::set<Port> tree_into_leaf(const RailFabric& rf, Interval& in, double w1, double w2) {
  std::set<Port> victims;
  const int leaf = rf.leaf[0][0];
  for (int spine : rf.spine[0]) {
    const Port down{spine, towards(rf.fabric, spine, leaf)};
    in.w[down] = w1;
    victims.insert(down);
    for (int other : rf.leaf[0]) {
      if (other == leaf) continue;
      const Port up{other, towards(rf.fabric, other, spine)};
      in.w[up] = w2;
      victims.insert(up);
    }
  }
  return victims;
}

}  // namespace

TEST_CASE("incast onto an HCA: the full leaf port is the root, the stalled spines its victims",
          "[congestion]") {
  const RailFabric rf = rail_fabric(kCongestionShape);
  Interval in;
  const int leaf = rf.leaf[0][0];
  const Port root{leaf, towards(rf.fabric, leaf, rf.hca[0][0])};
  in.u[root] = 0.98;  // always has credits, simply full
  in.w[root] = 0.01;
  const std::set<Port> victims = tree_into_leaf(rf, in, 0.6, 0.35);
  const Run r = analyse(rf.fabric, in);
  const auto& f = r.result.congestion;

  REQUIRE(!f.roots.empty());
  CHECK(r.port(f.roots[0].port) == root);
  CHECK(f.roots[0].cause == CongestionCause::kIncast);
  CHECK(f.roots[0].victims == victims.size());
  CHECK(r.attributed(root, victims) == victims.size());
  CHECK(f.roots[0].score == Approx(0.98 + 4 * 0.6 + 12 * 0.35));
  // Only the root is a root: no victim is ranked at all.
  CHECK(f.roots.size() == 1);
  CHECK(f.stalled == victims.size());
  CHECK(f.saturated == 1);
  // The hotspot score alone points at a spine port: why roots exist.
  const auto& top = r.result.ports[r.result.top_ports.front()];
  CHECK(r.result.ports[r.result.top_ports.front()].stall >= 0.35);
  CHECK(top.tier != ibfx::Tier::kLeaf);
  // A spine port's parent is the root; a leaf uplink's parent is a spine port.
  for (std::size_t k = 0; k < r.result.ports.size(); ++k) {
    if (!victims.contains(r.port(k))) continue;
    const Port parent = r.port(f.parent[k]);
    if (r.result.ports[k].tier == ibfx::Tier::kSpine) {
      CHECK(parent == root);
    } else {
      CHECK(victims.contains(parent));
    }
  }
}

TEST_CASE("a slow receiver: stalled into an HCA that is not full", "[congestion]") {
  const RailFabric rf = rail_fabric(kCongestionShape);
  Interval in;
  const int leaf = rf.leaf[0][0];
  const Port root{leaf, towards(rf.fabric, leaf, rf.hca[3][0])};
  in.w[root] = 0.8;
  in.u[root] = 0.15;
  const std::set<Port> victims = tree_into_leaf(rf, in, 0.5, 0.3);
  const Run r = analyse(rf.fabric, in);
  const auto& f = r.result.congestion;
  REQUIRE(!f.roots.empty());
  CHECK(r.port(f.roots[0].port) == root);
  CHECK(f.roots[0].cause == CongestionCause::kSlowReceiver);
  CHECK(r.attributed(root, victims) == victims.size());
}

TEST_CASE(
    "a full uplink: oversubscribed when the uplinks are evenly loaded and when the others idle "
    "routing imbalance with the tables' evidence or flow collision without",
    "[congestion]") {
  const RailFabric rf = rail_fabric(kCongestionShape);
  const int leaf = rf.leaf[1][2];
  const Port root{leaf, towards(rf.fabric, leaf, rf.spine[1][1])};
  Interval in;
  in.u[root] = 0.97;
  in.w[root] = 0.02;
  // The HCAs under the leaf cannot get their traffic out: they stall.
  std::set<Port> victims;
  for (int h = 16; h < 24; ++h) {
    const int hca = rf.hca[static_cast<std::size_t>(h)][1];
    const Port p{hca, 0};
    in.w[p] = 0.45;
    victims.insert(p);
  }
  const bool balanced = GENERATE(true, false);
  for (int spine : rf.spine[1]) {
    const Port up{leaf, towards(rf.fabric, leaf, spine)};
    if (up != root) in.u[up] = balanced ? 0.85 : 0.05;
  }
  // The leaf's table: every up port forwards `per_port` destinations, the
  // root's `root_routes` (none given: routes not known).
  const int routes_case = GENERATE(0, 1, 2);  // unknown, skewed, balanced
  ibfx::RouteEvidence evidence;
  evidence.destinations.resize(rf.fabric.nodes.size());
  auto& leaf_routes = evidence.destinations[static_cast<std::size_t>(leaf)];
  leaf_routes.assign(rf.fabric.nodes[static_cast<std::size_t>(leaf)].ports.size(), 1);
  for (int spine : rf.spine[1]) {
    const auto i = static_cast<std::size_t>(towards(rf.fabric, leaf, spine));
    leaf_routes[i] = routes_case == 1 && Port{leaf, static_cast<int>(i)} != root ? 4 : 24;
  }
  if (routes_case == 1) leaf_routes[static_cast<std::size_t>(root.second)] = 52;
  const Run r = analyse(rf.fabric, in, routes_case == 0 ? nullptr : &evidence);
  const auto& f = r.result.congestion;
  REQUIRE(!f.roots.empty());
  CHECK(r.port(f.roots[0].port) == root);
  CHECK(f.roots[0].victims == victims.size());
  CHECK(r.attributed(root, victims) == victims.size());
  if (routes_case == 0) {
    CHECK(f.roots[0].routes == -1);
  } else {
    CHECK(f.roots[0].routes == (routes_case == 1 ? 52 : 24));
    CHECK(f.roots[0].peer_routes == Approx(routes_case == 1 ? 4.0 : 24.0));
  }
  const auto imbalance = std::find_if(f.imbalance.begin(), f.imbalance.end(),
                                      [&](const auto& u) { return u.node == leaf; });
  REQUIRE(imbalance != f.imbalance.end());
  CHECK(imbalance->up_ports == 4);
  if (balanced) {
    CHECK(f.roots[0].cause == CongestionCause::kOversubscribed);
    CHECK(imbalance->ratio == Approx(0.97 * 4 / (0.97 + 3 * 0.85)).epsilon(1e-6));
  } else {
    // Uneven bytes: the routing only with the tables' evidence.
    CHECK(f.roots[0].cause == (routes_case == 0   ? CongestionCause::kUnevenUplinks
                               : routes_case == 1 ? CongestionCause::kRoutingImbalance
                                                  : CongestionCause::kFlowCollision));
    CHECK(imbalance->ratio == Approx(0.97 * 4 / (0.97 + 3 * 0.05)).epsilon(1e-6));
  }
  // The other leaves spread evenly: their imbalance is 1.
  for (const auto& u : f.imbalance) {
    if (u.node != leaf) CHECK(u.ratio == Approx(1.0));
  }
}

TEST_CASE("stalled with nothing congested downstream: a degraded link, else unexplained",
          "[congestion]") {
  RailFabric rf = rail_fabric(kCongestionShape);
  const int spine = rf.spine[0][2];
  const int leaf = rf.leaf[0][1];
  const Port root{spine, towards(rf.fabric, spine, leaf)};
  const bool degraded = GENERATE(true, false);
  if (degraded) {  // trained down to 1x, both ends
    rf.fabric.nodes[static_cast<std::size_t>(spine)]
        .ports[static_cast<std::size_t>(root.second)]
        .width_active = 1;
    rf.fabric.nodes[static_cast<std::size_t>(leaf)]
        .ports[static_cast<std::size_t>(towards(rf.fabric, leaf, spine))]
        .width_active = 1;
  }
  Interval in;
  in.w[root] = 0.7;
  std::set<Port> victims;
  for (int other : rf.leaf[0]) {
    if (other == leaf) continue;
    const Port up{other, towards(rf.fabric, other, spine)};
    in.w[up] = 0.3;
    victims.insert(up);
  }
  const Run r = analyse(rf.fabric, in);
  const auto& f = r.result.congestion;
  REQUIRE(!f.roots.empty());
  CHECK(r.port(f.roots[0].port) == root);
  CHECK(f.roots[0].cause ==
        (degraded ? CongestionCause::kDegradedLink : CongestionCause::kUnexplained));
  CHECK(r.attributed(root, victims) == victims.size());
}

TEST_CASE("symbol errors on a stalled link with a quiet downstream: degraded link",
          "[congestion]") {
  const RailFabric rf = rail_fabric(kCongestionShape);
  const int spine = rf.spine[1][0];
  const Port root{spine, towards(rf.fabric, spine, rf.leaf[1][3])};
  Interval in;
  in.w[root] = 0.5;
  Run r;
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  r.samples = in.samples(rf.fabric);
  for (auto& s : r.samples) {
    if (s.node == root.first && static_cast<int>(s.port_index) == root.second) s.error_count = 12;
  }
  r.result = ibfx::analyze(topo, rf.fabric, r.samples, {});
  REQUIRE(r.result.congestion.roots.size() == 1);
  CHECK(r.result.congestion.roots[0].cause == CongestionCause::kDegradedLink);
}

TEST_CASE("a healthy fabric has no root, and busy ports without victims are not roots",
          "[congestion]") {
  const RailFabric rf = rail_fabric(kCongestionShape);
  Interval in;
  in.background_w = 0.03;
  in.background_u = 0.6;
  // A full link into an HCA that nobody waits for: a fast transfer, no tree.
  in.u[{rf.leaf[0][0], towards(rf.fabric, rf.leaf[0][0], rf.hca[1][0])}] = 0.99;
  // Uplinks carrying only a trickle (management traffic) are not imbalanced.
  const int quiet = rf.leaf[1][3];
  for (int spine : rf.spine[1]) in.u[{quiet, towards(rf.fabric, quiet, spine)}] = 0.0001;
  in.u[{quiet, towards(rf.fabric, quiet, rf.spine[1][0])}] = 0.004;
  const Run r = analyse(rf.fabric, in);
  const auto& f = r.result.congestion;
  CHECK(f.imbalance.size() == 7);  // every leaf but the quiet one
  for (const auto& u : f.imbalance) CHECK(u.node != quiet);
  CHECK(f.roots.empty());
  CHECK(f.victims == 0);
  CHECK(f.stalled == 0);
  CHECK(f.saturated == 1);
  for (std::size_t k = 0; k < r.result.ports.size(); ++k) {
    CHECK(f.parent[k] == ibfx::kNoPort);
    CHECK(f.root[k] == ibfx::kNoPort);
  }
}

TEST_CASE("two trees: each root keeps its own victims, the bigger tree ranks first, top_k",
          "[congestion]") {
  const RailFabric rf = rail_fabric(kCongestionShape);
  Interval in;
  const int leaf = rf.leaf[0][0];
  const Port incast{leaf, towards(rf.fabric, leaf, rf.hca[0][0])};
  in.u[incast] = 0.98;
  const std::set<Port> big = tree_into_leaf(rf, in, 0.6, 0.35);
  const int leaf1 = rf.leaf[1][1];
  const Port slow{leaf1, towards(rf.fabric, leaf1, rf.hca[9][1])};
  in.w[slow] = 0.9;
  in.u[slow] = 0.1;
  const Port local{rf.hca[10][1], 0};  // a sender on the same leaf
  in.w[local] = 0.4;
  const ibfx::Topology topo = ibfx::classify_topology(rf.fabric, {}, {});
  const auto samples = in.samples(rf.fabric);
  const ibfx::AnalysisResult result = ibfx::analyze(topo, rf.fabric, samples, {});
  const auto& f = result.congestion;
  REQUIRE(f.roots.size() == 2);
  auto at = [&](std::size_t k) {
    return Port{result.ports[k].node, static_cast<int>(result.ports[k].port_index)};
  };
  CHECK(at(f.roots[0].port) == incast);
  CHECK(at(f.roots[1].port) == slow);
  CHECK(f.roots[1].cause == CongestionCause::kSlowReceiver);
  CHECK(f.roots[1].victims == 1);
  CHECK(f.roots[1].score == Approx(0.9 + 0.4));

  ibfx::CongestionConfig one;
  one.top_k = 1;
  const auto only = ibfx::build_congestion_forest(topo, rf.fabric, result.ports, samples, one);
  REQUIRE(only.roots.size() == 1);
  CHECK(at(only.roots[0].port) == incast);
}

TEST_CASE("peer links in a ring neither loop nor root anything", "[congestion]") {
  ibfx::test::FabricBuilder b;
  const int s0 = b.add_switch("a");
  const int s1 = b.add_switch("b");
  const int s2 = b.add_switch("c");
  b.link(s0, s1);
  b.link(s1, s2);
  b.link(s2, s0);
  const ibfx::Fabric f = b.build();
  Interval in;
  in.background_w = 0.5;  // every port stalled, each waiting on the next
  const Run r = analyse(f, in);
  CHECK(r.result.congestion.stalled == 6);
  for (const auto& root : r.result.congestion.roots) {
    INFO(root.port);
    CHECK(root.victims <= 6);
  }
}

TEST_CASE("congestion thresholds from the scores section", "[congestion]") {
  const ibfx::ScoreConfig c = ibfx::parse_score_config(YAML::Load(R"(scores:
  stall_threshold: 0.2
  saturation_threshold: 0.8
  imbalance_threshold: 2
  root_top_k: 5
  evidence_floor: 0.5
  evidence_margin: 1.5
  hold_fraction: 0.8
)")["scores"],
                                                       "s.yaml");
  CHECK(c.congestion.evidence_floor == 0.5);
  CHECK(c.congestion.evidence_margin == 1.5);
  CHECK(c.congestion.hold_fraction == 0.8);
  CHECK(c.congestion.stall_threshold == 0.2);
  CHECK(c.congestion.saturation_threshold == 0.8);
  CHECK(c.congestion.imbalance_threshold == 2);
  CHECK(c.congestion.top_k == 5);
  const ibfx::CongestionConfig defaults = ibfx::parse_score_config(YAML::Node(), "s").congestion;
  CHECK(defaults.stall_threshold == 0.1);
  CHECK(defaults.saturation_threshold == 0.9);
  CHECK(defaults.top_k == 20);
  try {
    ibfx::parse_score_config(YAML::Load("scores:\n  imbalance_threshold: 0.5\n")["scores"],
                             "s.yaml");
    FAIL("accepted an imbalance threshold below 1");
  } catch (const ibfx::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("s.yaml:2: scores.imbalance_threshold: 0.5 is out of "
                                           "range"));
  }
  try {
    ibfx::parse_score_config(YAML::Load("scores:\n  hold_fraction: 1.5\n")["scores"], "s.yaml");
    FAIL("accepted a hold fraction above 1");
  } catch (const ibfx::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("s.yaml:2: scores.hold_fraction: 1.5 is out of range"));
  }
}
