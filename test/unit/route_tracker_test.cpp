#include "routing/route_tracker.h"

#include <catch2/catch.hpp>
#include <memory>

#include "analysis/scores.h"
#include "routing/root_senders.h"
#include "test/support/fabric_builder.h"
#include "test/support/route_tables_builder.h"

using ibfx::RouteTables;
using ibfx::test::min_hop_tables;
using ibfx::test::port_to;
using ibfx::test::rail_fabric;
using ibfx::test::RailFabric;

namespace {

const ibfx::test::RailFabricShape kStageShape{
    .rails = 1, .leaves_per_rail = 2, .hosts_per_leaf = 4, .spines_per_rail = 2, .cores = 0};

std::uint32_t index_of(const ibfx::Fabric& f, int node, std::uint8_t number) {
  const auto& ports = f.nodes[static_cast<std::size_t>(node)].ports;
  for (std::uint32_t i = 0; i < ports.size(); ++i) {
    if (ports[i].number == number) return i;
  }
  FAIL("no port");
  return 0;
}

// One interval: every HCA port sends `bytes` per second but host h sends
// (h + 1) x that; the leaf-0 port into host 0 is the root of an incast.
ibfx::SweepAnalysis incast_analysis(const RailFabric& rf, double bytes) {
  const ibfx::Fabric& f = rf.fabric;
  ibfx::SweepAnalysis a;
  a.topology = std::make_shared<const ibfx::Topology>(ibfx::classify_topology(f, {}, {}));
  a.interval_seconds = 1;
  for (std::size_t h = 0; h < rf.hca.size(); ++h) {
    ibfx::PortScore ps;
    ps.node = rf.hca[h][0];
    ps.port_index = 0;
    ps.valid = true;
    a.result.ports.push_back(ps);
    ibfx::PortSample s;
    s.node = ps.node;
    s.interval_seconds = 1;
    s.xmit_data_words = static_cast<std::uint64_t>(bytes * static_cast<double>(h + 1) / 4);
    a.samples.push_back(s);
  }
  const int leaf = rf.leaf[0][0];
  ibfx::PortScore root;
  root.node = leaf;
  root.port_index = index_of(f, leaf, port_to(f, leaf, rf.hca[0][0]));
  root.valid = true;
  a.result.ports.push_back(root);
  a.samples.push_back({});
  a.result.congestion.roots.push_back(
      {a.result.ports.size() - 1, ibfx::CongestionCause::kIncast, 1, 3});
  return a;
}

// `tables` as the SM leaves them when it moves leaf 0's spine-1
// destinations to spine 0.
std::shared_ptr<const RouteTables> rerouted(const RailFabric& rf, const RouteTables& tables) {
  RouteTables moved = tables;
  const int leaf = rf.leaf[0][0];
  const std::uint8_t from = port_to(rf.fabric, leaf, rf.spine[0][1]);
  const std::uint8_t to = port_to(rf.fabric, leaf, rf.spine[0][0]);
  auto& out = moved.switches[moved.by_guid.at(rf.fabric.nodes[static_cast<std::size_t>(leaf)].guid)]
                  .out_port;
  for (auto& p : out) {
    if (p == from) p = to;
  }
  moved.version = 2;
  return std::make_shared<const RouteTables>(std::move(moved));
}

}  // namespace

TEST_CASE("RouteTracker: rebuilt only on new tables or fabric, re-routes as changes",
          "[routes][route_tracker]") {
  const RailFabric rf = rail_fabric(kStageShape);
  const auto fabric = std::make_shared<const ibfx::Fabric>(rf.fabric);
  auto tables = std::make_shared<const RouteTables>(min_hop_tables(*fabric));
  ibfx::RouteTracker stage;
  CHECK(stage.evidence() == nullptr);
  stage.update(fabric, nullptr, 10);
  CHECK(stage.model() == nullptr);
  stage.update(fabric, tables, 10);
  REQUIRE(stage.model() != nullptr);
  REQUIRE(stage.evidence() != nullptr);
  const auto first = stage.model();
  stage.update(fabric, tables, 11);
  CHECK(stage.model() == first);  // nothing changed: not rebuilt

  // The SM moves leaf 0's spine-1 destinations to spine 0.
  const int leaf = rf.leaf[0][0];
  const std::uint8_t to = port_to(*fabric, leaf, rf.spine[0][0]);
  stage.update(fabric, rerouted(rf, *tables), 20);
  CHECK(stage.model() != first);
  const ibfx::RouteSweep sweep = stage.after_analysis(incast_analysis(rf, 1e9));
  CHECK(sweep.changes_total == 1);
  REQUIRE(sweep.changes->size() == 1);
  CHECK(sweep.changes->front().at == 20);
  CHECK(sweep.changes->front().id == 1);
  CHECK(sweep.changes->front().switches_changed == 1);
  // The leaf's routing is now all on one uplink.
  bool found = false;
  for (const auto& b : sweep.balance) {
    if (b.node != leaf) continue;
    found = true;
    CHECK(b.ratio == Approx(2.0));
    CHECK(b.max_port == to);
  }
  CHECK(found);
  // The same tables again under a new fabric (a discovery): rebuilt, no
  // re-route.
  stage.update(std::make_shared<const ibfx::Fabric>(rf.fabric), stage.model()->tables_ptr(), 30);
  CHECK(stage.after_analysis(incast_analysis(rf, 1e9)).changes_total == 1);
}

TEST_CASE("RouteTracker in the background: the sweep keeps its model until the new one lands",
          "[routes][route_tracker]") {
  const RailFabric rf = rail_fabric(kStageShape);
  const auto fabric = std::make_shared<const ibfx::Fabric>(rf.fabric);
  auto tables = std::make_shared<const RouteTables>(min_hop_tables(*fabric));
  ibfx::RouteTracker stage;
  stage.build_in_background(true);
  stage.update(fabric, tables, 10);
  stage.wait_for_build();
  REQUIRE(stage.model() != nullptr);
  CHECK(stage.evidence() != nullptr);
  const auto first = stage.model();

  // A re-route: until its model lands, the sweeps keep the one they have
  // (same fabric: its evidence holds).
  const auto moved_tables = rerouted(rf, *tables);
  stage.update(fabric, moved_tables, 20);
  CHECK((stage.model() == first || stage.model()->tables_ptr() == moved_tables));
  CHECK(stage.evidence() != nullptr);
  // Asked again while it builds: one build, not two.
  stage.update(fabric, moved_tables, 21);
  stage.wait_for_build();
  CHECK(stage.model()->tables_ptr() == moved_tables);
  const ibfx::RouteSweep sweep = stage.after_analysis(incast_analysis(rf, 1e9));
  CHECK(sweep.changes_total == 1);
  REQUIRE(sweep.changes->size() == 1);
  CHECK(sweep.changes->front().at == 20);
  CHECK(!sweep.balance.empty());

  // A new fabric (a discovery): until its model lands, no evidence, no
  // senders, no balance (the old model's node indices are not this
  // fabric's), and no re-route when it does.
  const auto rediscovered = std::make_shared<const ibfx::Fabric>(rf.fabric);
  stage.update(rediscovered, moved_tables, 30);
  if (stage.building()) {
    CHECK(stage.evidence() == nullptr);
    const ibfx::RouteSweep during = stage.after_analysis(incast_analysis(rf, 1e9));
    CHECK(during.senders.empty());
    CHECK(during.balance.empty());
  }
  stage.wait_for_build();
  CHECK(stage.model()->fabric_ptr() == rediscovered);
  CHECK(stage.evidence() != nullptr);
  CHECK(stage.after_analysis(incast_analysis(rf, 1e9)).changes_total == 1);
  // Routes turned off: no model.
  stage.update(rediscovered, nullptr, 40);
  CHECK(stage.model() == nullptr);
  CHECK_FALSE(stage.building());
}

TEST_CASE("Senders behind a root: every HCA routed through it, by bytes sent, top ten",
          "[routes][route_tracker]") {
  ibfx::test::RailFabricShape shape = kStageShape;
  shape.hosts_per_leaf = 8;  // 16 hosts: more senders than the top ten
  const RailFabric rf = rail_fabric(shape);
  const auto fabric = std::make_shared<const ibfx::Fabric>(rf.fabric);
  ibfx::RouteTracker stage;
  stage.update(fabric, std::make_shared<const RouteTables>(min_hop_tables(*fabric)), 1);
  const ibfx::SweepAnalysis a = incast_analysis(rf, 1e8);
  const ibfx::RouteSweep sweep = stage.after_analysis(a);
  REQUIRE(sweep.senders.size() == 1);
  const ibfx::RootSenders& rs = sweep.senders[0];
  CHECK(rs.root == 0);
  CHECK(rs.routes == 1);    // the port into one HCA: its one LID
  CHECK(rs.sources == 15);  // every other host
  REQUIRE(rs.top.size() == ibfx::kTopSenders);
  // Host 15 sends the most (16 x), then 14, ...
  CHECK(rs.top[0].endpoint.node == rf.hca[15][0]);
  CHECK(rs.top[0].bytes_per_second == Approx(16e8));
  CHECK(rs.top[9].endpoint.node == rf.hca[6][0]);
  for (std::size_t i = 1; i < rs.top.size(); ++i) {
    CHECK(rs.top[i - 1].bytes_per_second >= rs.top[i].bytes_per_second);
  }
  CHECK(rs.top[0].port != ibfx::kNoPort);
  // Without tables: no claim about who sends.
  ibfx::RouteTracker none;
  none.update(fabric, nullptr, 1);
  CHECK(none.after_analysis(a).senders.empty());
}
