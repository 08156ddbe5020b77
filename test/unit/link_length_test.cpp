// Cables longer than their peers (issue #41, links/link_length.h): the
// round trips come from PortInfo:LinkRoundTripLatency as libibmad's own
// field tables encode it (ibsim answers 0, so no simulator can test this),
// read by port_from_port_info(), the decoder discovery uses.
#include "links/link_length.h"

#include <infiniband/mad.h>

#include <array>
#include <catch2/catch.hpp>
#include <memory>

#include "discovery/discovery.h"
#include "links/link_events.h"
#include "links/link_health_tracker.h"
#include "test/support/fabric_builder.h"

namespace {

using ibfx::FabricPort;
using ibfx::LinkCondition;

// The round trip a port reports, through a PortInfo attribute encoded by
// libibmad and decoded as discovery decodes it.
std::uint32_t reported(unsigned ns) {
  std::array<std::uint8_t, IB_SMP_DATA_SIZE> info{};
  mad_set_field(info.data(), 0, IB_PORT_STATE_F, 4);
  mad_set_field(info.data(), 0, IB_PORT_PHYS_STATE_F, 5);
  mad_set_field(info.data(), 0, IB_PORT_LINK_ROUND_TRIP_F, ns);
  return ibfx::port_from_port_info(info.data(), true).link_round_trip_ns;
}

// Two switches (a leaf and a spine) with `parallel` cables between them,
// and `hcas` HCAs on the leaf.
struct Pair {
  ibfx::Fabric fabric;
  int leaf = 0, spine = 0;
  Pair(int parallel, int hcas = 0) {
    ibfx::test::FabricBuilder b;
    leaf = b.add_switch("leaf");
    spine = b.add_switch("spine");
    for (int i = 0; i < parallel; ++i) b.link(leaf, spine);
    for (int h = 0; h < hcas; ++h) b.link(b.add_hca("host" + std::to_string(h) + " mlx5_0"), leaf);
    fabric = b.build();
  }
  FabricPort& port(int node, int number) {
    return fabric.nodes[static_cast<std::size_t>(node)].ports[static_cast<std::size_t>(number - 1)];
  }
  // Both ends of leaf port `number`'s cable report `ns` (a cable measures
  // the same from either end); `far` for the far end when it differs.
  void round_trip(int number, unsigned ns) { round_trip(number, ns, ns); }
  void round_trip(int number, unsigned near, unsigned far) {
    FabricPort& p = port(leaf, number);
    p.link_round_trip_ns = reported(near);
    port(p.remote_node, p.remote_port).link_round_trip_ns = reported(far);
  }
  std::vector<ibfx::LongerLink> longer() const {
    return ibfx::links_longer_than_their_peers(fabric, nullptr);
  }
};

}  // namespace

TEST_CASE("A cable longer than its parallel cables is a length outlier", "[links][length]") {
  Pair p(6);
  for (int i = 1; i <= 6; ++i) p.round_trip(i, 100 + static_cast<unsigned>(i % 2));  // 100-101 ns
  p.round_trip(4, 180);  // 8 m more cable than its peers
  const auto longer = p.longer();
  REQUIRE(longer.size() == 1);  // once per cable, not once per end
  CHECK(longer[0].node == p.leaf);
  CHECK(longer[0].port_index == 3);
  CHECK(longer[0].round_trip_ns == 180);
  CHECK(longer[0].peers_round_trip_ns == 101);
  CHECK(longer[0].peers == 6);
  CHECK(longer[0].parallel);
}

TEST_CASE("Length outliers: like cables, a spread within the floor, a shorter cable: nothing",
          "[links][length]") {
  Pair p(6);
  SECTION("symmetric cables, all alike") {
    for (int i = 1; i <= 6; ++i) p.round_trip(i, 120);
  }
  SECTION("a spread of a few metres stays under the floor") {
    for (int i = 1; i <= 6; ++i) p.round_trip(i, 100 + 8 * static_cast<unsigned>(i));  // 108-148
  }
  SECTION("a shorter cable is no outlier") {
    for (int i = 1; i <= 6; ++i) p.round_trip(i, 300);
    p.round_trip(2, 100);
  }
  CHECK(p.longer().empty());
}

TEST_CASE("Length outliers need four peers with a known round trip", "[links][length]") {
  SECTION("four cables: three peers") {
    Pair p(4);
    for (int i = 1; i <= 4; ++i) p.round_trip(i, 100);
    p.round_trip(1, 400);
    CHECK(p.longer().empty());
  }
  SECTION("six cables, two of them not known (0, as ibsim answers)") {
    Pair p(6);
    for (int i = 1; i <= 4; ++i) p.round_trip(i, 100);
    p.round_trip(1, 400);
    CHECK(p.longer().empty());
  }
  SECTION("nothing known at all") {
    Pair p(8);
    CHECK(p.longer().empty());
  }
  SECTION("the long cable's own round trip not known") {
    Pair p(6);
    for (int i = 2; i <= 6; ++i) p.round_trip(i, 100);
    CHECK(p.longer().empty());
  }
}

TEST_CASE("Length outliers: one end's round trip is enough, both ends' are averaged",
          "[links][length]") {
  Pair p(6);
  for (int i = 1; i <= 6; ++i) p.round_trip(i, 100);
  p.round_trip(3, 0, 200);  // only the spine's end says
  p.round_trip(5, 190, 210);
  const auto longer = p.longer();
  REQUIRE(longer.size() == 2);
  CHECK(longer[0].round_trip_ns == 200);
  CHECK(longer[1].round_trip_ns == 200);
  CHECK(longer[1].port_index == 4);
}

TEST_CASE("Length outliers: too few parallel cables, the cables of the same tiers judge",
          "[links][length]") {
  // Two cables to the spine (too few to compare), and six HCAs on the
  // leaf: HCA cables are judged against the leaf's other HCA cables.
  Pair p(2, 6);
  for (int i = 1; i <= 8; ++i) p.round_trip(i, 60);
  p.round_trip(1, 400);  // a spine cable: only one peer, nothing to say
  p.round_trip(5, 160);  // an HCA cable 10 m longer than its peers
  const auto longer = p.longer();
  REQUIRE(longer.size() == 1);
  CHECK_FALSE(longer[0].parallel);
  CHECK(longer[0].round_trip_ns == 160);
  CHECK(longer[0].peers_round_trip_ns == 60);
  CHECK(longer[0].peers == 6);
  // Listed from the end with the smaller (GUID, port): the leaf.
  CHECK(longer[0].node == p.leaf);
  CHECK(longer[0].port_index == 4);
}

TEST_CASE("LinkHealthTracker: a length outlier is listed, never unhealthy, opens no event",
          "[links][length]") {
  Pair p(6);
  for (int i = 1; i <= 6; ++i) p.round_trip(i, 100);
  p.round_trip(6, 200);
  const auto fabric = std::make_shared<const ibfx::Fabric>(p.fabric);
  ibfx::CounterAccumulator acc;
  ibfx::LinkHealthTracker tracker;
  ibfx::LinkEventTracker events;
  std::vector<std::vector<bool>> read(fabric->nodes.size());
  for (std::size_t n = 0; n < read.size(); ++n) read[n].assign(fabric->nodes[n].ports.size(), true);
  for (double now = 1000; now < 1003; ++now) {
    const auto r = tracker.observe(fabric, nullptr, acc, read, now, {});
    REQUIRE(r->links.size() == 1);
    const ibfx::LinkReport& l = r->links[0];
    CHECK(l.condition == LinkCondition::kLengthOutlier);
    CHECK(l.has(LinkCondition::kLengthOutlier));
    CHECK_FALSE(l.unhealthy());
    CHECK(l.round_trip_ns == 200);
    CHECK(l.peers_round_trip_ns == 100);
    CHECK(l.a.guid == fabric->nodes[0].guid);
    CHECK(l.a.port == 6);
    for (const std::uint64_t total : r->events_total) CHECK(total == 0);
    events.observe(*r, {"leaf", "spine"}, now);
    CHECK(events.events()->empty());
  }
  CHECK_FALSE(ibfx::link_condition_alarms(LinkCondition::kLengthOutlier));
  CHECK(ibfx::link_condition_alarms(LinkCondition::kDegraded));
  CHECK(ibfx::link_condition_name(LinkCondition::kLengthOutlier) == "length_outlier");
  CHECK(ibfx::parse_link_condition("length_outlier") == LinkCondition::kLengthOutlier);
}

TEST_CASE("LinkHealthTracker: a length outlier under a worse condition stays one of its conditions",
          "[links][length]") {
  Pair p(6);
  for (int i = 1; i <= 6; ++i) p.round_trip(i, 100);
  p.round_trip(6, 200);
  p.port(p.leaf, 6).width_active = 1;  // 1x among 4x peers: degraded too
  const auto fabric = std::make_shared<const ibfx::Fabric>(p.fabric);
  ibfx::CounterAccumulator acc;
  ibfx::LinkHealthTracker tracker;
  std::vector<std::vector<bool>> read(fabric->nodes.size());
  const auto r = tracker.observe(fabric, nullptr, acc, read, 1000, {});
  REQUIRE(r->links.size() == 1);
  CHECK(r->links[0].condition == LinkCondition::kDegraded);
  CHECK(r->links[0].has(LinkCondition::kLengthOutlier));
  CHECK(r->links[0].unhealthy());
  CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kDegraded)] == 1);
  CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kLengthOutlier)] == 0);
}
