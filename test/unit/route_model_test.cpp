#include "routing/route_model.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <set>

#include "analysis/topology.h"
#include "routing/route_balance.h"
#include "routing/route_changes.h"
#include "test/support/fabric_builder.h"
#include "test/support/route_tables_builder.h"

using ibfx::Fabric;
using ibfx::kNoRoute;
using ibfx::RouteEndpoint;
using ibfx::RouteModel;
using ibfx::RouteTables;
using ibfx::TraceError;
using ibfx::test::min_hop_tables;
using ibfx::test::port_to;
using ibfx::test::rail_fabric;
using ibfx::test::RailFabric;

namespace {

const ibfx::test::RailFabricShape kModelShape{
    .rails = 2, .leaves_per_rail = 3, .hosts_per_leaf = 4, .spines_per_rail = 2, .cores = 1};
// Every HCA port of the fabric (one per rail and host).
constexpr int kHcaPorts = 2 * 3 * 4;

std::shared_ptr<const RouteModel> model_of(const Fabric& f, const RouteTables& t) {
  return RouteModel::build(std::make_shared<const Fabric>(f),
                           std::make_shared<const RouteTables>(t));
}

RouteEndpoint hca(const RailFabric& rf, int host, int rail) {
  return {rf.hca[static_cast<std::size_t>(host)][static_cast<std::size_t>(rail)], 1};
}

std::uint16_t lid_of(const Fabric& f, int node) {
  return f.nodes[static_cast<std::size_t>(node)].lid;
}

ibfx::SwitchRoutes& table_of(RouteTables& t, const Fabric& f, int node) {
  return t.switches[t.by_guid.at(f.nodes[static_cast<std::size_t>(node)].guid)];
}

std::size_t port_index(const Fabric& f, int node, std::uint8_t number) {
  const auto& ports = f.nodes[static_cast<std::size_t>(node)].ports;
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (ports[i].number == number) return i;
  }
  FAIL("no port");
  return 0;
}

}  // namespace

TEST_CASE("a route within a leaf and across the spines hop by hop", "[routes]") {
  const RailFabric rf = rail_fabric(kModelShape);
  const auto m = model_of(rf.fabric, min_hop_tables(rf.fabric));
  CHECK(m->stats().switches_routed == m->stats().switches);
  CHECK(m->stats().broken_routes == 0);
  // host0 and host1 share leaf 0 of rail 0: one switch.
  const auto near = m->trace(hca(rf, 0, 0), lid_of(rf.fabric, rf.hca[1][0]));
  REQUIRE(near.ok());
  REQUIRE(near.hops.size() == 1);
  CHECK(near.hops[0].node == rf.leaf[0][0]);
  CHECK(near.hops[0].in_port == port_to(rf.fabric, rf.leaf[0][0], rf.hca[0][0]));
  CHECK(near.hops[0].out_port == port_to(rf.fabric, rf.leaf[0][0], rf.hca[1][0]));
  // host0 to host5 (leaf 1): leaf, a spine, leaf.
  const auto far = m->trace(hca(rf, 0, 0), lid_of(rf.fabric, rf.hca[5][0]));
  REQUIRE(far.ok());
  REQUIRE(far.hops.size() == 3);
  CHECK(far.hops[0].node == rf.leaf[0][0]);
  CHECK((far.hops[1].node == rf.spine[0][0] || far.hops[1].node == rf.spine[0][1]));
  CHECK(far.hops[2].node == rf.leaf[0][1]);
  CHECK(far.hops[2].out_port == port_to(rf.fabric, rf.leaf[0][1], rf.hca[5][0]));
  // The switch's own LID ends at the switch.
  const auto to_spine = m->trace(hca(rf, 0, 0), lid_of(rf.fabric, rf.spine[0][1]));
  REQUIRE(to_spine.ok());
  CHECK(to_spine.hops.size() == 1);
  // Across rails: up to the core and down.
  const auto other_rail = m->trace(hca(rf, 0, 0), lid_of(rf.fabric, rf.hca[5][1]));
  REQUIRE(other_rail.ok());
  CHECK(other_rail.hops.size() == 5);
  CHECK(other_rail.hops[2].node == rf.core[0]);
  CHECK(m->trace(hca(rf, 0, 0), 4000).error == TraceError::kUnknownLid);
}

TEST_CASE("route counts per switch port", "[routes]") {
  const RailFabric rf = rail_fabric(kModelShape);
  const auto m = model_of(rf.fabric, min_hop_tables(rf.fabric));
  // The port into an HCA: that HCA's one destination, and every other HCA
  // port sends through it.
  const int leaf = rf.leaf[0][0];
  const auto into = port_index(rf.fabric, leaf, port_to(rf.fabric, leaf, rf.hca[2][0]));
  CHECK(m->port_routes(leaf)[into].destinations == 1);
  CHECK(m->port_routes(leaf)[into].pairs == kHcaPorts - 1);
  // A leaf's up ports: the HCAs of the other leaves of its rail, shared
  // evenly; their pairs: its own HCAs to each of those.
  std::uint64_t destinations = 0;
  std::uint64_t pairs = 0;
  for (int spine : rf.spine[0]) {
    const auto up = port_index(rf.fabric, leaf, port_to(rf.fabric, leaf, spine));
    destinations += m->port_routes(leaf)[up].destinations;
    pairs += m->port_routes(leaf)[up].pairs;
    CHECK(m->port_routes(leaf)[up].destinations == 10);
  }
  const int others = kHcaPorts - kModelShape.hosts_per_leaf;
  CHECK(destinations == static_cast<std::uint64_t>(others));
  CHECK(pairs == static_cast<std::uint64_t>(kModelShape.hosts_per_leaf * others));
  // HCAs have no counts.
  CHECK(m->port_routes(rf.hca[0][0]).empty());
}

TEST_CASE("a forwarding loop and a hole are errors never paths", "[routes]") {
  const RailFabric rf = rail_fabric(kModelShape);
  RouteTables t = min_hop_tables(rf.fabric);
  const Fabric& f = rf.fabric;
  const std::uint16_t dest = lid_of(f, rf.hca[5][0]);  // under leaf 1
  // Leaf 0 sends it to spine 0, which sends it back down to leaf 0.
  table_of(t, f, rf.leaf[0][0]).out_port[dest] = port_to(f, rf.leaf[0][0], rf.spine[0][0]);
  table_of(t, f, rf.spine[0][0]).out_port[dest] = port_to(f, rf.spine[0][0], rf.leaf[0][0]);
  const std::uint16_t hole = lid_of(f, rf.hca[9][0]);  // under leaf 2
  table_of(t, f, rf.leaf[0][0]).out_port[hole] = kNoRoute;
  const auto m = model_of(f, t);
  const auto loop = m->trace(hca(rf, 0, 0), dest);
  CHECK(loop.error == TraceError::kLoop);
  CHECK(loop.hops.size() == 2);
  const auto none = m->trace(hca(rf, 0, 0), hole);
  CHECK(none.error == TraceError::kDeadEnd);
  CHECK(none.at_node == rf.leaf[0][0]);
  // Both switches in the loop (and any whose walk enters it), and leaf 0
  // for the hole.
  CHECK(m->stats().broken_routes >= 3);
  // A loop carries nothing to the destination: the final port into it
  // counts only the sources whose walk does not enter the loop, never
  // leaf 0's.
  const int leaf1 = rf.leaf[0][1];
  const auto into = port_index(f, leaf1, port_to(f, leaf1, rf.hca[5][0]));
  CHECK(m->port_routes(leaf1)[into].pairs > 0);
  CHECK(m->port_routes(leaf1)[into].pairs <=
        static_cast<std::uint64_t>(kHcaPorts - 1 - kModelShape.hosts_per_leaf));
}

TEST_CASE("a port whose link is down and a wrong destination", "[routes]") {
  RailFabric rf = rail_fabric(kModelShape);
  RouteTables t = min_hop_tables(rf.fabric);
  Fabric& f = rf.fabric;
  // leaf 0 -> spine 0 goes down after the tables were written.
  const int leaf = rf.leaf[0][0];
  const std::uint8_t up = port_to(f, leaf, rf.spine[0][0]);
  f.nodes[static_cast<std::size_t>(leaf)].ports[port_index(f, leaf, up)].state = 1;
  // A LID forwarded into another HCA.
  const std::uint16_t dest = lid_of(f, rf.hca[1][0]);
  table_of(t, f, leaf).out_port[dest] = port_to(f, leaf, rf.hca[2][0]);
  const auto m = model_of(f, t);
  bool saw_down = false;
  for (int h = 4; h < 12; ++h) {
    const auto r = m->trace(hca(rf, 0, 0), lid_of(f, rf.hca[static_cast<std::size_t>(h)][0]));
    if (r.error == TraceError::kLinkDown) {
      saw_down = true;
      CHECK(r.at_node == leaf);
    } else {
      CHECK(r.ok());
    }
  }
  CHECK(saw_down);
  CHECK(m->trace(hca(rf, 0, 0), dest).error == TraceError::kWrongDestination);
  // A source port without a link.
  f.nodes[static_cast<std::size_t>(rf.hca[3][0])].ports[0].state = 1;
  const auto m2 = model_of(f, t);
  CHECK(m2->trace(hca(rf, 3, 0), dest).error == TraceError::kNoSourceLink);
}

TEST_CASE("tables not read or stale are named and never traced through", "[routes]") {
  const RailFabric rf = rail_fabric(kModelShape);
  RouteTables t = min_hop_tables(rf.fabric);
  const Fabric& f = rf.fabric;
  table_of(t, f, rf.leaf[0][1]).stale = true;
  table_of(t, f, rf.leaf[0][2]).complete = false;
  const auto m = model_of(f, t);
  CHECK(m->stats().switches_stale == 1);
  CHECK(m->stats().switches_routed == m->stats().switches - 1);
  const auto stale = m->trace(hca(rf, 0, 0), lid_of(f, rf.hca[5][0]));
  CHECK(stale.error == TraceError::kStaleTable);
  CHECK(stale.at_node == rf.leaf[0][1]);
  const auto unread = m->trace(hca(rf, 0, 0), lid_of(f, rf.hca[9][0]));
  CHECK(unread.error == TraceError::kNoTable);
  CHECK(unread.at_node == rf.leaf[0][2]);
  CHECK_FALSE(m->routed(rf.leaf[0][2]));
  // A stale table still counts (it is the last one read).
  CHECK(m->routed(rf.leaf[0][1]));
  // No tables at all: every trace says so.
  const auto none = RouteModel::build(std::make_shared<const Fabric>(f), nullptr);
  CHECK(none->trace(hca(rf, 0, 0), lid_of(f, rf.hca[1][0])).error == TraceError::kNoTable);
}

TEST_CASE("LMC: every LID of a port's range is a destination and one pair", "[routes]") {
  RailFabric rf = rail_fabric(kModelShape);
  Fabric& f = rf.fabric;
  // Host 11's rail-0 HCA answers at two LIDs; give it a free range.
  auto& port = f.nodes[static_cast<std::size_t>(rf.hca[11][0])].ports[0];
  port.lid = 200;
  port.lmc = 1;
  const auto m = model_of(f, min_hop_tables(f));
  CHECK(m->owner(201).node == rf.hca[11][0]);
  CHECK(m->owner(201).port == 1);
  REQUIRE(m->trace(hca(rf, 0, 0), 200).ok());
  REQUIRE(m->trace(hca(rf, 0, 0), 201).ok());
  const int leaf = rf.leaf[0][2];
  const auto into = port_index(f, leaf, port_to(f, leaf, rf.hca[11][0]));
  CHECK(m->port_routes(leaf)[into].destinations == 2);
  CHECK(m->port_routes(leaf)[into].pairs == kHcaPorts - 1);
}

TEST_CASE("the sources behind a port", "[routes]") {
  const RailFabric rf = rail_fabric(kModelShape);
  const Fabric& f = rf.fabric;
  const auto m = model_of(f, min_hop_tables(f));
  auto nodes_of = [](const std::vector<RouteEndpoint>& sources) {
    std::set<int> nodes;
    for (const auto& e : sources) nodes.insert(e.node);
    return nodes;
  };
  // Into an HCA (an incast's root): every other HCA port.
  const int leaf = rf.leaf[0][0];
  const auto incast = nodes_of(m->sources_through(leaf, port_to(f, leaf, rf.hca[2][0])));
  CHECK(incast.size() == kHcaPorts - 1);
  CHECK_FALSE(incast.contains(rf.hca[2][0]));
  // A leaf's up port: only that leaf's own HCAs send up through it.
  const auto up = nodes_of(m->sources_through(leaf, port_to(f, leaf, rf.spine[0][1])));
  CHECK(up == std::set<int>{rf.hca[0][0], rf.hca[1][0], rf.hca[2][0], rf.hca[3][0]});
  // A spine's port down into leaf 1: the HCAs of the other rail-0 leaves,
  // never leaf 1's own.
  const int spine = rf.spine[0][0];
  const auto down = nodes_of(m->sources_through(spine, port_to(f, spine, rf.leaf[0][1])));
  for (int h : {0, 1, 2, 3, 8, 9, 10, 11})
    CHECK(down.contains(rf.hca[static_cast<std::size_t>(h)][0]));
  for (int h : {4, 5, 6, 7}) CHECK_FALSE(down.contains(rf.hca[static_cast<std::size_t>(h)][0]));
  // An HCA port: itself.
  CHECK(m->sources_through(rf.hca[0][0], 1) == std::vector<RouteEndpoint>{hca(rf, 0, 0)});
}

TEST_CASE("routing balance and re-routes", "[routes]") {
  const RailFabric rf = rail_fabric(kModelShape);
  const Fabric& f = rf.fabric;
  const RouteTables balanced = min_hop_tables(f);
  const auto even = model_of(f, balanced);
  const ibfx::Topology topo = ibfx::classify_topology(f, {}, {});
  for (const auto& b : ibfx::route_balance(*even, topo)) {
    CHECK(b.up_ports == 2);
    CHECK(b.ratio < 1.25);
  }
  // Leaf 0 puts every remote destination on its spine-0 port.
  RouteTables skewed = balanced;
  const int leaf = rf.leaf[0][0];
  const std::uint8_t hot = port_to(f, leaf, rf.spine[0][0]);
  const std::uint8_t cold = port_to(f, leaf, rf.spine[0][1]);
  auto& out = table_of(skewed, f, leaf).out_port;
  std::size_t moved = 0;
  for (std::size_t lid = 0; lid < out.size(); ++lid) {
    if (out[lid] != cold) continue;
    out[lid] = hot;
    ++moved;
  }
  const auto bent = model_of(f, skewed);
  const auto balance = ibfx::route_balance(*bent, topo);
  const auto it =
      std::find_if(balance.begin(), balance.end(), [&](const auto& b) { return b.node == leaf; });
  REQUIRE(it != balance.end());
  CHECK(it->ratio == Approx(2.0));
  CHECK(it->max_port == hot);
  const auto evidence = ibfx::route_evidence(*bent);
  REQUIRE(evidence.of(static_cast<std::size_t>(leaf)) != nullptr);
  CHECK(evidence.of(static_cast<std::size_t>(rf.hca[0][0])) == nullptr);
  CHECK((*evidence.of(static_cast<std::size_t>(leaf)))[port_index(f, leaf, cold)] == 0);

  const ibfx::RouteChange change = ibfx::diff_routes(*even, *bent);
  CHECK(change.entries_changed == moved);
  CHECK(change.switches_changed == 1);
  CHECK(change.destinations_moved == moved);
  REQUIRE(!change.lost.empty());
  CHECK(change.lost[0].node_guid == f.nodes[static_cast<std::size_t>(leaf)].guid);
  CHECK(change.lost[0].port == cold);
  CHECK(change.lost[0].after == 0);
  REQUIRE(!change.gained.empty());
  CHECK(change.gained[0].port == hot);
  CHECK(ibfx::diff_routes(*even, *even).empty());
  // A switch read for the first time is not a re-route.
  RouteTables fewer = balanced;
  table_of(fewer, f, leaf).complete = false;
  CHECK(ibfx::diff_routes(*model_of(f, fewer), *bent).empty());
}
