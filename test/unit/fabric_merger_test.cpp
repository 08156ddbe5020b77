#include "discovery/fabric_merger.h"

#include <catch2/catch.hpp>

#include "test/support/fake_fabric.h"

using namespace ibfx;
using namespace std::chrono_literals;

namespace {

using MergerClock = FabricMerger::Clock;
const MergerClock::time_point kMergeT0 = MergerClock::time_point{} + 1000h;

// `f` as a discovery that lost the SMPs to `guid` sees it: the node absent,
// later nodes one index down, and its neighbours' ports still physically
// up (the cable is there) but without a far end.
Fabric missing(const Fabric& f, std::uint64_t guid) {
  Fabric out;
  std::vector<std::int32_t> moved(f.nodes.size(), kNoNode);
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].guid == guid) continue;
    moved[i] = static_cast<std::int32_t>(out.nodes.size());
    out.nodes.push_back(f.nodes[i]);
  }
  for (FabricNode& n : out.nodes) {
    for (FabricPort& p : n.ports) {
      if (!p.linked()) continue;
      p.remote_node = moved[static_cast<std::size_t>(p.remote_node)];
      if (p.remote_node == kNoNode) p.remote_port = 0;
    }
  }
  out.index();
  return out;
}

const FabricPort* find_port(const Fabric& f, std::uint64_t guid, int number) {
  const FabricNode* n = f.find(guid);
  if (n == nullptr) return nullptr;
  for (const FabricPort& p : n->ports) {
    if (p.number == number) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("FabricMerger keeps a node a discovery missed, addressable and cabled",
          "[fabric_merger]") {
  const Fabric full = ibfx::test::star_fabric(3);
  FabricMerger merger(ForgetPolicy{3, 1h});
  const MergeOutcome first = merger.merge(full, kMergeT0);
  CHECK(first.seen == 4);
  CHECK(first.missing == 0);

  const MergeOutcome second = merger.merge(missing(full, 0x201), kMergeT0 + 1min);
  CHECK(second.seen == 3);
  CHECK(second.missing == 1);
  CHECK(second.forgotten.empty());
  const Fabric& f = *second.fabric;
  REQUIRE(f.nodes.size() == 4);
  const FabricNode* kept = f.find(0x201);
  REQUIRE(kept != nullptr);
  CHECK_FALSE(kept->present);
  CHECK(kept->lid == 3);  // its last LID: still swept
  REQUIRE(kept->ports.size() == 1);
  CHECK(kept->ports[0].lid == 3);
  CHECK(kept->ports[0].up());  // as last seen, not marked down
  REQUIRE(kept->ports[0].linked());
  CHECK(f.nodes[static_cast<std::size_t>(kept->ports[0].remote_node)].guid == 0x100);
  // The switch port towards it is still up and keeps its far end.
  const FabricPort* sw = find_port(f, 0x100, 2);
  REQUIRE(sw != nullptr);
  REQUIRE(sw->linked());
  CHECK(f.nodes[static_cast<std::size_t>(sw->remote_node)].guid == 0x201);
  CHECK(sw->remote_port == 1);
  CHECK(merger.missing() == 1);
}

TEST_CASE("FabricMerger forgets a node only after N discoveries and the time", "[fabric_merger]") {
  const Fabric full = ibfx::test::star_fabric(2);
  Fabric gone = missing(full, 0x200);
  // Really removed: the switch port is down.
  for (FabricPort& p : gone.nodes[0].ports) {
    if (!p.linked()) {
      p.state = 1;
      p.phys_state = 2;
    }
  }
  FabricMerger merger(ForgetPolicy{2, 10min});
  merger.merge(full, kMergeT0);
  const MergeOutcome second = merger.merge(gone, kMergeT0 + 1min);
  CHECK(second.missing == 1);
  // Its port is down: the switch, which the discovery did see, says so.
  CHECK_FALSE(find_port(*second.fabric, 0x200, 1)->up());
  // Two discoveries, but only 2 minutes: kept.
  const MergeOutcome third = merger.merge(gone, kMergeT0 + 2min);
  CHECK(third.missing == 1);
  CHECK(third.forgotten.empty());
  // Long enough, and missing again: forgotten, and the link to it ends.
  const MergeOutcome fourth = merger.merge(gone, kMergeT0 + 12min);
  CHECK(fourth.missing == 0);
  REQUIRE(fourth.forgotten.size() == 1);
  CHECK(fourth.forgotten[0].guid == 0x200);
  CHECK(fourth.forgotten[0].description == "gpu0 mlx5_0");
  CHECK(fourth.forgotten[0].type == NodeType::kHca);
  CHECK(fourth.fabric->find(0x200) == nullptr);
  CHECK(fourth.fabric->nodes.size() == 2);
  CHECK_FALSE(find_port(*fourth.fabric, 0x100, 1)->linked());
  CHECK(merger.missing() == 0);
}

TEST_CASE("FabricMerger: time alone never forgets, nor does a node that answers",
          "[fabric_merger]") {
  const Fabric full = ibfx::test::star_fabric(2);
  const Fabric gone = missing(full, 0x201);
  FabricMerger merger(ForgetPolicy{3, 1ms});
  merger.merge(full, kMergeT0);
  CHECK(merger.merge(gone, kMergeT0 + 10h).missing == 1);
  CHECK(merger.merge(gone, kMergeT0 + 20h).missing == 1);  // 2 of 3
  // It answered PMA queries at its LID: the count starts again.
  merger.note_answered(0x201);
  const auto later = MergerClock::now() + 1h;
  CHECK(merger.merge(gone, later).missing == 1);
  CHECK(merger.merge(gone, later + 1h).missing == 1);
  const MergeOutcome third = merger.merge(gone, later + 2h);
  CHECK(third.forgotten.size() == 1);
}

TEST_CASE("FabricMerger keeps what a seen node's lost SMPs did not say", "[fabric_merger]") {
  const Fabric full = ibfx::test::star_fabric(3);
  FabricMerger merger;
  merger.merge(full, kMergeT0);
  // The switch answered NodeInfo, but its port 0 PortInfo (its LID) and
  // port 2 PortInfo were lost.
  Fabric partial = full;
  FabricNode& sw = partial.nodes[0];
  sw.lid = 0;
  for (FabricPort& p : sw.ports) p.lid = 0;
  sw.ports.erase(sw.ports.begin() + 1);
  // gpu0's NodeDescription was lost; gpu2 came up with a new LID.
  partial.nodes[1].description.clear();
  partial.nodes[3].lid = 40;
  partial.nodes[3].ports[0].lid = 40;
  partial.index();
  const MergeOutcome m = merger.merge(partial, kMergeT0 + 1min);
  CHECK(m.ports_kept == 1);
  CHECK(m.missing == 0);
  const FabricNode* merged_sw = m.fabric->find(0x100);
  REQUIRE(merged_sw != nullptr);
  CHECK(merged_sw->present);
  CHECK(merged_sw->lid == 1);
  REQUIRE(merged_sw->ports.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(merged_sw->ports[i].number == i + 1);  // ascending again
    CHECK(merged_sw->ports[i].lid == 1);
    REQUIRE(merged_sw->ports[i].linked());
  }
  CHECK(m.fabric->find(0x200)->description == "gpu0 mlx5_0");
  CHECK(m.fabric->find(0x202)->lid == 40);  // what it did see wins
  CHECK(find_port(*m.fabric, 0x202, 1)->lid == 40);
}

TEST_CASE("FabricMerger: a node that comes back is present again", "[fabric_merger]") {
  const Fabric full = ibfx::test::star_fabric(2);
  FabricMerger merger(ForgetPolicy{1, 1ms});
  merger.merge(full, kMergeT0);
  CHECK(merger.merge(missing(full, 0x201), kMergeT0 + 1min).forgotten.size() == 1);
  const MergeOutcome back = merger.merge(full, kMergeT0 + 2min);
  CHECK(back.missing == 0);
  REQUIRE(back.fabric->find(0x201) != nullptr);
  CHECK(back.fabric->find(0x201)->present);
  CHECK(back.fabric->nodes.size() == 3);
}

TEST_CASE("FabricMerger carries the local port's facts of the latest discovery",
          "[fabric_merger]") {
  Fabric found = ibfx::test::star_fabric(2);
  found.local_node = 0x201;
  found.sm_lid = 7;
  found.local_port_state = 4;
  FabricMerger merger(ForgetPolicy{3, 1h});
  (void)merger.merge(found, kMergeT0);
  found.local_port_state = 2;  // the SM left it in Initialize
  const MergeOutcome again = merger.merge(found, kMergeT0 + 1min);
  CHECK(again.fabric->local_node == 0x201);
  CHECK(again.fabric->sm_lid == 7);
  CHECK(again.fabric->local_port_state == 2);
}

TEST_CASE("FabricMerger keeps each port's LMC with its LID", "[fabric_merger]") {
  Fabric full = ibfx::test::star_fabric(3);
  for (FabricPort& p : full.nodes[0].ports) p.lmc = 1;  // the switch's (port 0's) LMC
  full.nodes[1].ports[0].lmc = 2;
  full.nodes[2].ports[0].lmc = 2;
  full.index();
  FabricMerger merger;
  merger.merge(full, kMergeT0);

  Fabric partial = full;
  // The switch's port 0 PortInfo was lost: no LID, no LMC on any port.
  partial.nodes[0].lid = 0;
  for (FabricPort& p : partial.nodes[0].ports) {
    p.lid = 0;
    p.lmc = 0;
  }
  // gpu1's own PortInfo was lost (PortState 0): reached as a far end only.
  FabricPort& lost = partial.nodes[2].ports[0];
  lost.state = 0;
  lost.lid = 0;
  lost.lmc = 0;
  // gpu0 was given a new LMC by the SM: what is seen wins.
  partial.nodes[1].ports[0].lmc = 0;
  partial.index();
  const MergeOutcome m = merger.merge(partial, kMergeT0 + 1min);
  for (int n = 1; n <= 3; ++n) {
    INFO("switch port " << n);
    REQUIRE(find_port(*m.fabric, 0x100, n) != nullptr);
    CHECK(find_port(*m.fabric, 0x100, n)->lid == 1);
    CHECK(find_port(*m.fabric, 0x100, n)->lmc == 1);
  }
  CHECK(find_port(*m.fabric, 0x201, 1)->lid == 3);
  CHECK(find_port(*m.fabric, 0x201, 1)->lmc == 2);
  CHECK(find_port(*m.fabric, 0x200, 1)->lmc == 0);
}
