#include "links/link_health_tracker.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>

#include "test/support/fabric_builder.h"

namespace {

using ibfx::Counter;
using ibfx::LinkCondition;

// A switch and two HCAs: switch port 1 to hca1 port 1, switch port 2 to hca2
// port 1 (4x HDR: 200 Gb/s). Counters are set as a PMA would report them
// (PortCounters widths) and applied to the accumulator like a sweep does.
struct LinkBench {
  LinkBench() {
    ibfx::test::FabricBuilder b;
    sw = b.add_switch("sw");
    hca1 = b.add_hca("host1 mlx5_0");
    hca2 = b.add_hca("host2 mlx5_0");
    b.link(hca1, sw);
    b.link(hca2, sw);
    fabric = std::make_shared<const ibfx::Fabric>(b.build());
    read.assign(fabric->nodes.size(), {});
    for (std::size_t n = 0; n < fabric->nodes.size(); ++n) {
      read[n].assign(fabric->nodes[n].ports.size(), true);
      for (const ibfx::FabricPort& p : fabric->nodes[n].ports) {
        raw[{fabric->nodes[n].guid, p.number}] = {};
      }
    }
    sweep();  // the first reading: the starting point
  }
  std::uint64_t guid(int node) const { return fabric->nodes[static_cast<std::size_t>(node)].guid; }
  // Adds to one raw counter of (node, port).
  void bump(int node, std::uint8_t port, Counter c, std::uint64_t by) {
    raw[{guid(node), port}][static_cast<std::size_t>(c)] += by;
  }
  void set(int node, std::uint8_t port, Counter c, std::uint64_t value) {
    raw[{guid(node), port}][static_cast<std::size_t>(c)] = value;
  }
  std::shared_ptr<const ibfx::LinkHealthReport> sweep(double dt = 1) {
    now += dt;
    for (const auto& [key, values] : raw) {
      ibfx::CounterReading r;
      r.set(Counter::kSymbolErrors, std::min<std::uint64_t>(values[9], 0xffff), 16);
      r.set(Counter::kLinkErrorRecovery, values[10], 8);
      r.set(Counter::kLinkDowned, values[11], 8);
      r.set(Counter::kReceiveRemotePhysicalErrors, values[13], 16);
      r.set(Counter::kLocalLinkIntegrityErrors, values[18], 4);
      r.set(Counter::kExcessiveBufferOverrunErrors, values[19], 4);
      accumulator.apply(key, r, {});
    }
    return tracker.observe(fabric, nullptr, accumulator, read, now, config);
  }
  int sw = 0, hca1 = 0, hca2 = 0;
  std::shared_ptr<const ibfx::Fabric> fabric;
  std::vector<std::vector<bool>> read;
  std::unordered_map<ibfx::PortKey, std::array<std::uint64_t, ibfx::kCounterCount>,
                     ibfx::PortKeyHash>
      raw;
  ibfx::CounterAccumulator accumulator;
  ibfx::LinkHealthTracker tracker;
  ibfx::LinkHealthConfig config;
  double now = 1'000'000;
};

static_assert(static_cast<int>(Counter::kSymbolErrors) == 9);
static_assert(static_cast<int>(Counter::kLinkDowned) == 11);
static_assert(static_cast<int>(Counter::kReceiveRemotePhysicalErrors) == 13);
static_assert(static_cast<int>(Counter::kExcessiveBufferOverrunErrors) == 19);

}  // namespace

TEST_CASE("LinkHealthTracker: a healthy fabric has no link conditions and holds no state",
          "[links]") {
  LinkBench b;
  for (int i = 0; i < 5; ++i) {
    const auto r = b.sweep();
    CHECK(r->links.empty());
    CHECK(r->port_ber.empty());
    CHECK(r->tracked == 0);
  }
}

TEST_CASE("LinkHealthTracker: symbol errors at a receiver are the direction into it", "[links]") {
  LinkBench b;
  // hca1's receiver: the switch -> hca1 direction. 1e-10 at 200 Gb/s: 20/s.
  b.bump(b.hca1, 1, Counter::kSymbolErrors, 20);
  auto r = b.sweep();
  REQUIRE(r->links.size() == 1);
  const ibfx::LinkReport& l = r->links[0];
  CHECK(l.condition == LinkCondition::kBerError);
  // a is the smaller (GUID, port): the switch (added first).
  CHECK(l.a.guid == b.guid(b.sw));
  CHECK(l.a.port == 1);
  CHECK(l.b.guid == b.guid(b.hca1));
  CHECK(l.into_b.condition == LinkCondition::kBerError);
  CHECK(l.into_b.symbol_ber == Approx(1e-10));
  CHECK(l.into_a.condition == LinkCondition::kNone);
  CHECK(l.b_receives_worse());
  CHECK(l.a.read);
  CHECK(l.since == b.now);
  REQUIRE(r->port_ber.size() == 1);
  CHECK(r->port_ber[0].node == b.hca1);
  CHECK(r->port_ber[0].ber == Approx(1e-10));
  CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kBerError)] == 1);
  // Still erring: one event, not one per sweep.
  b.bump(b.hca1, 1, Counter::kSymbolErrors, 20);
  r = b.sweep();
  CHECK(r->links.size() == 1);
  CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kBerError)] == 1);
}

TEST_CASE("LinkHealthTracker: one stray error never alarms", "[links]") {
  LinkBench b;
  b.bump(b.sw, 2, Counter::kSymbolErrors, 1);
  const auto r = b.sweep();
  CHECK(r->links.empty());
  REQUIRE(r->port_ber.size() == 1);  // but its BER is shown
  CHECK(r->port_ber[0].node == b.sw);
  CHECK(r->port_ber[0].port_index == 1);
}

TEST_CASE("LinkHealthTracker: remote physical errors are never this cable's", "[links]") {
  LinkBench b;
  b.bump(b.sw, 1, Counter::kReceiveRemotePhysicalErrors, 1000);
  CHECK(b.sweep()->links.empty());
}

TEST_CASE("LinkHealthTracker: integrity and overrun errors are link_errors", "[links]") {
  LinkBench b;
  b.bump(b.sw, 2, Counter::kLocalLinkIntegrityErrors, 1);
  b.bump(b.hca1, 1, Counter::kExcessiveBufferOverrunErrors, 1);
  const auto r = b.sweep();
  REQUIRE(r->links.size() == 2);
  for (const ibfx::LinkReport& l : r->links) CHECK(l.condition == LinkCondition::kLinkErrors);
}

TEST_CASE("LinkHealthTracker: down, flapping, and a restart that is neither", "[links]") {
  LinkBench b;
  SECTION("both ends' LinkDowned moving twice in 10 minutes is flapping") {
    b.bump(b.sw, 1, Counter::kLinkDowned, 1);
    b.bump(b.hca1, 1, Counter::kLinkDowned, 1);
    auto r = b.sweep();
    REQUIRE(r->links.size() == 1);
    CHECK(r->links[0].condition == LinkCondition::kDown);
    r = b.sweep();  // back up, one down so far
    CHECK(r->links.empty());
    b.bump(b.sw, 1, Counter::kLinkDowned, 1);
    b.bump(b.hca1, 1, Counter::kLinkDowned, 1);
    r = b.sweep(60);
    REQUIRE(r->links.size() == 1);
    CHECK(r->links[0].has(LinkCondition::kFlapping));
    CHECK(r->links[0].condition == LinkCondition::kDown);
    r = b.sweep();
    REQUIRE(r->links.size() == 1);
    CHECK(r->links[0].condition == LinkCondition::kFlapping);
    CHECK(r->links[0].downs_last_hour == 2);
    CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kDown)] == 2);
    CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kFlapping)] == 1);
    r = b.sweep(601);
    CHECK(r->links.empty());
  }
  SECTION("a link that stays down stays down until a discovery says otherwise") {
    // The counters stop moving once the link is down: that is no proof it
    // is back (it was before, at the second sweep, with no discovery and
    // the HCA end unreadable: the link vanished, then came back as a new
    // event when discovery saw it down).
    b.bump(b.sw, 1, Counter::kLinkDowned, 1);
    b.bump(b.hca1, 1, Counter::kLinkDowned, 1);
    REQUIRE(b.sweep()->links.size() == 1);
    b.read[static_cast<std::size_t>(b.hca1)][0] = false;  // unreachable behind its cable
    for (int i = 0; i < 3; ++i) {
      const auto r = b.sweep();
      REQUIRE(r->links.size() == 1);
      CHECK(r->links[0].condition == LinkCondition::kDown);
      CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kDown)] == 1);
    }
    // A discovery that started after the down, and saw the link up again.
    ibfx::Fabric f = *b.fabric;
    f.discovered_at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(b.now + 2)));
    b.fabric = std::make_shared<const ibfx::Fabric>(f);
    CHECK(b.sweep(3)->links.empty());
  }
  SECTION("an HCA end answering again is proof its link is up") {
    b.bump(b.sw, 1, Counter::kLinkDowned, 1);
    b.bump(b.hca1, 1, Counter::kLinkDowned, 1);
    REQUIRE(b.sweep()->links.size() == 1);
    CHECK(b.sweep()->links.empty());  // hca1's PMA answered: its port is Active
  }
  SECTION("one end's LinkDowned alone: down, never flapping") {
    for (int i = 0; i < 3; ++i) {
      b.bump(b.sw, 2, Counter::kLinkDowned, 1);
      const auto r = b.sweep();
      REQUIRE(r->links.size() == 1);
      CHECK(r->links[0].condition == LinkCondition::kDown);
      CHECK_FALSE(r->links[0].has(LinkCondition::kFlapping));
    }
  }
  SECTION("a host reboot: its counters back at zero, the switch's LinkDowned moved") {
    b.bump(b.hca1, 1, Counter::kSymbolErrors, 2);
    b.bump(b.hca1, 1, Counter::kLinkDowned, 3);
    b.sweep();
    b.set(b.hca1, 1, Counter::kSymbolErrors, 0);
    b.set(b.hca1, 1, Counter::kLinkDowned, 0);
    b.bump(b.sw, 1, Counter::kLinkDowned, 1);
    auto r = b.sweep();
    CHECK(r->links.empty());
    r = b.sweep();
    CHECK(r->links.empty());
  }
}

TEST_CASE("LinkHealthTracker: a saturated 16-bit SymbolErrorCounter says 'at least'", "[links]") {
  LinkBench b;
  b.bump(b.hca2, 1, Counter::kSymbolErrors, 0x20000);  // reported as 0xffff
  auto r = b.sweep();
  REQUIRE(r->links.size() == 1);
  CHECK(r->links[0].condition == LinkCondition::kBerError);
  CHECK(r->links[0].worse().at_least);
  r = b.sweep(3600);  // nothing more can be counted: the verdict holds
  REQUIRE(r->links.size() == 1);
  CHECK(r->links[0].condition == LinkCondition::kBerError);
}

TEST_CASE("LinkHealthTracker: a link that goes down stays listed with its far end", "[links]") {
  LinkBench b;
  const std::uint64_t hca1_guid = b.guid(b.hca1);
  b.sweep();
  // Rediscovered: the switch's port 1 is down and sees no far end; hca1
  // (unreachable now) is kept as it was, its port down too.
  ibfx::Fabric f = *b.fabric;
  ibfx::FabricPort& sp = f.nodes[static_cast<std::size_t>(b.sw)].ports[0];
  sp.state = 1;
  sp.phys_state = 2;
  sp.remote_node = ibfx::kNoNode;
  sp.remote_port = 0;
  ibfx::FabricNode& h = f.nodes[static_cast<std::size_t>(b.hca1)];
  h.present = false;
  h.ports[0].state = 1;
  h.ports[0].phys_state = 2;
  h.ports[0].remote_node = ibfx::kNoNode;
  b.fabric = std::make_shared<const ibfx::Fabric>(f);
  b.read[static_cast<std::size_t>(b.hca1)][0] = false;
  for (int i = 0; i < 3; ++i) {
    const auto r = b.sweep();
    REQUIRE(r->links.size() == 1);
    const ibfx::LinkReport& l = r->links[0];
    CHECK(l.condition == LinkCondition::kDown);
    CHECK(l.a.guid == b.guid(b.sw));
    CHECK(l.b.guid == hca1_guid);
    CHECK(l.b.port == 1);
    CHECK_FALSE(l.b.read);
  }
  // Discovery forgets hca1: the cable goes with it.
  b.tracker.forget(hca1_guid);
  ibfx::Fabric g = f;
  g.nodes.erase(g.nodes.begin() + b.hca1);
  for (ibfx::FabricNode& n : g.nodes) {
    for (ibfx::FabricPort& p : n.ports) {
      if (p.remote_node > b.hca1) --p.remote_node;
    }
  }
  g.index();
  b.fabric = std::make_shared<const ibfx::Fabric>(g);
  b.read.erase(b.read.begin() + b.hca1);
  b.raw.erase({hca1_guid, 1});
  CHECK(b.sweep()->links.empty());
}

TEST_CASE("LinkHealthTracker: a link trained slower than its peers is degraded", "[links]") {
  ibfx::test::FabricBuilder fb;
  const int sw = fb.add_switch("sw");
  for (int h = 0; h < 3; ++h) fb.link(fb.add_hca("host" + std::to_string(h) + " mlx5_0"), sw);
  ibfx::Fabric f = fb.build();
  // host0's cable trained at 1x (IBA LinkWidthActive 1).
  f.nodes[1].ports[0].width_active = 1;
  f.nodes[0].ports[0].width_active = 1;
  const auto fabric = std::make_shared<const ibfx::Fabric>(f);
  const ibfx::Topology topology = ibfx::classify_topology(*fabric, {}, {});
  ibfx::CounterAccumulator acc;
  ibfx::LinkHealthTracker tracker;
  const std::vector<std::vector<bool>> read(fabric->nodes.size());
  const auto r = tracker.observe(fabric, &topology, acc, read, 1000, {});
  REQUIRE(r->links.size() == 1);
  CHECK(r->links[0].condition == LinkCondition::kDegraded);
  CHECK(r->links[0].rate_gbps == Approx(50));
  CHECK(r->links[0].peers_rate_gbps == Approx(200));
  CHECK(r->events_total[static_cast<std::size_t>(LinkCondition::kDegraded)] == 1);
}
