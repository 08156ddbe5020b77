#include "sweep/sweeper.h"

#include <catch2/catch.hpp>

#include "test/support/fake_fabric.h"
#include "test/support/fake_pma.h"

using namespace ibfx;
using ibfx::test::FakePma;
using std::chrono::milliseconds;

namespace {
constexpr auto idx(Counter c) { return static_cast<std::size_t>(c); }

MadEngineLimits fast_limits() { return MadEngineLimits{16, 4, milliseconds(10), 1, 0}; }

// The switch and every HCA of star_fabric as fake PMA nodes.
void add_nodes(FakePma& fake, const Fabric& f, std::uint16_t cap_mask, std::uint32_t cap_mask2) {
  for (const auto& n : f.nodes) {
    auto& node = fake.nodes[n.lid];
    node.cap_mask = cap_mask;
    node.cap_mask2 = cap_mask2;
  }
}
}  // namespace

TEST_CASE("Sweeper reads every port of every node with 32-bit PortCounters", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(4);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[1].ports[2].narrow[IB_PC_XMT_WAIT_F] = 1234;
  fake.nodes[1].ports[2].narrow[IB_PC_ERR_SYM_F] = 5;
  fake.nodes[1].ports[2].extended[IB_PC_EXT_XMT_BYTES_F] = 1ull << 40;
  fake.nodes[3].ports[1].narrow[IB_PC_LINK_DOWNED_F] = 2;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  CHECK(r.completed);
  CHECK(r.ports_read == 8);  // 4 switch ports + 4 HCA ports
  for (const auto& n : r.nodes) CHECK(n.answered);
  const auto* sw2 = acc.find(PortKey{0x100, 2});
  REQUIRE(sw2 != nullptr);
  CHECK(sw2->total[idx(Counter::kTransmitWait)] == 1234);
  CHECK(sw2->bits[idx(Counter::kTransmitWait)] == 32);
  CHECK(sw2->total[idx(Counter::kSymbolErrors)] == 5);
  CHECK(sw2->total[idx(Counter::kTransmitDataBytes)] == 1ull << 40);  // words; x4 at render
  CHECK(sw2->bits[idx(Counter::kTransmitDataBytes)] == 64);           // extended wins over 32-bit
  CHECK(acc.find(PortKey{0x201, 1})->total[idx(Counter::kLinkDowned)] == 2);
  // ClassPortInfo and PortSamplesControl (5 nodes) + 2 attributes x 8 ports.
  CHECK(r.mads_sent == 5 + 5 + 16);
}

TEST_CASE("Sweeper takes 64-bit PortXmitWait from PortCountersExtended with CapabilityMask2",
          "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, pma_cap::kAddlPortCountersExt);
  fake.nodes[1].ports[1].extended[IB_PC_EXT_XMT_WAIT_F] = 0x5'0000'0000ull;
  fake.nodes[1].ports[1].extended[IB_PC_EXT_ERR_SYM_F] = 100000;
  fake.nodes[1].ports[1].narrow[IB_PC_XMT_WAIT_F] = 7;  // must not be read
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  const auto* st = acc.find(PortKey{0x100, 1});
  REQUIRE(st != nullptr);
  CHECK(st->total[idx(Counter::kTransmitWait)] == 0x5'0000'0000ull);
  CHECK(st->bits[idx(Counter::kTransmitWait)] == 64);
  CHECK(st->total[idx(Counter::kSymbolErrors)] == 100000);
  // Only PortCountersExtended per port: 2 x (ClassPortInfo, PortSamplesControl)
  // + 2 ports x 1.
  CHECK(r.mads_sent == 6);
}

TEST_CASE("Sweeper falls back to 32-bit counters without extended support", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, 0, 0);  // no ExtWidth, no XmitWait
  fake.nodes[1].ports[1].narrow[IB_PC_XMT_BYTES_F] = 1000;
  fake.nodes[1].ports[1].narrow[IB_PC_XMT_WAIT_F] = 99;  // reserved without the cap bit
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  sweeper.sweep(f, {});
  const auto* st = acc.find(PortKey{0x100, 1});
  REQUIRE(st != nullptr);
  CHECK(st->total[idx(Counter::kTransmitDataBytes)] == 1000);
  CHECK(st->bits[idx(Counter::kTransmitDataBytes)] == 32);
  CHECK(st->bits[idx(Counter::kTransmitWait)] == 0);
}

TEST_CASE("Sweeper survives a silent node: counted, node down, others read", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(3);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[3].silent = true;  // second HCA
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  CHECK(r.completed);
  CHECK(r.ports_read == 5);
  CHECK_FALSE(r.nodes[2].answered);
  CHECK(r.nodes[2].failed_mads > 0);
  CHECK(r.nodes[0].answered);
  CHECK(r.nodes[1].answered);
  CHECK(r.nodes[3].answered);
  CHECK(r.mads_timeout == 1);  // its ClassPortInfo
}

TEST_CASE("Sweeper caches ClassPortInfo per node", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(2);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult first = sweeper.sweep(f, {});
  const SweepResult second = sweeper.sweep(f, {});
  CHECK(first.mads_sent == 3 + 3 + 8);
  CHECK(second.mads_sent == 8);
  CHECK(sweeper.cached_capabilities() == 3);
}

TEST_CASE("Sweeper clears saturating counters with a CounterSelect sparing the others",
          "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  auto& port = fake.nodes[1].ports[1];
  port.narrow[IB_PC_ERR_SYM_F] = 60000;             // > 75% of 16 bits
  port.narrow[IB_PC_LINK_DOWNED_F] = 3;             // well below
  port.narrow[IB_PC_XMT_WAIT_F] = 4'000'000'000u;   // > 75% of 32 bits
  port.narrow[IB_PC_XMT_BYTES_F] = 4'000'000'000u;  // read 64-bit via extended: spared
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  SweepOptions opt;
  opt.clear = ClearPolicy{true, 0.75};
  const SweepResult r = sweeper.sweep(f, opt);
  CHECK(r.clears_sent == 1);
  CHECK(port.clears == 1);
  CHECK(port.last_clear_mask == ((1u << 0) | (1u << 16)));
  CHECK(port.narrow[IB_PC_ERR_SYM_F] == 0);
  CHECK(port.narrow[IB_PC_LINK_DOWNED_F] == 3);
  CHECK(port.narrow[IB_PC_XMT_BYTES_F] == 4'000'000'000u);

  port.narrow[IB_PC_ERR_SYM_F] = 10;
  port.narrow[IB_PC_XMT_WAIT_F] = 500;
  sweeper.sweep(f, opt);
  const auto* st = acc.find(PortKey{0x100, 1});
  CHECK(st->total[idx(Counter::kSymbolErrors)] == 60010);
  CHECK(st->total[idx(Counter::kTransmitWait)] == 4'000'000'500u);
  CHECK(acc.stats().external_clears[idx(Counter::kSymbolErrors)] == 0);
  CHECK(acc.stats().clears[idx(Counter::kSymbolErrors)] == 1);
}

TEST_CASE("Sweeper does not write to the fabric by default", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[1].ports[1].narrow[IB_PC_ERR_SYM_F] = 65535;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  CHECK(r.clears_sent == 0);
  CHECK(fake.nodes[1].ports[1].clears == 0);
  CHECK(acc.stats().saturations[idx(Counter::kSymbolErrors)] == 1);
}

TEST_CASE("Sweeper keeps totals monotonic across an out-of-band clear", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[1].ports[1].narrow[IB_PC_XMT_WAIT_F] = 1000;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  sweeper.sweep(f, {});
  fake.nodes[1].ports[1].narrow[IB_PC_XMT_WAIT_F] = 40;  // perfquery -R elsewhere
  sweeper.sweep(f, {});
  CHECK(acc.find(PortKey{0x100, 1})->total[idx(Counter::kTransmitWait)] == 1040);
}

TEST_CASE("Sweeper skips empty switch cages and down HCA ports", "[sweeper]") {
  Fabric f = ibfx::test::star_fabric(2, 3);
  f.nodes[2].ports[0].state = 1;  // HCA link down
  f.nodes[2].ports[0].phys_state = 2;
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  CHECK(r.ports_read == 3);  // switch ports 1, 2 and the first HCA
  CHECK(acc.find(PortKey{0x100, 3}) == nullptr);
}

TEST_CASE("Sweeper sends nothing to a node without a LID", "[sweeper]") {
  // A node that has no LID (yet): a MAD to LID 0 could only time out.
  Fabric f = ibfx::test::star_fabric(2);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);  // nobody at LID 0
  FabricNode& lost = f.nodes[2];
  lost.present = false;
  lost.lid = 0;
  for (FabricPort& p : lost.ports) p.lid = 0;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  CHECK_FALSE(r.nodes[2].swept);
  CHECK(r.mads_timeout == 0);
  // ClassPortInfo + PortSamplesControl for the switch and the other HCA,
  // 2 attributes x (2 switch ports + 1 HCA port); nothing for the lost one.
  CHECK(r.mads_sent == 2 + 2 + 6);
  CHECK(r.nodes[0].answered);
  CHECK(r.nodes[1].answered);
}

TEST_CASE("Two shards together cover every node exactly once", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(12);
  std::vector<int> covered(f.nodes.size(), 0);
  for (std::uint32_t shard = 0; shard < 2; ++shard) {
    FakePma fake;
    add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
    MadEngine engine(fake, fast_limits());
    CounterAccumulator acc;
    Sweeper sweeper(engine, acc);
    SweepOptions opt;
    opt.shard_count = 2;
    opt.shard_index = shard;
    const SweepResult r = sweeper.sweep(f, opt);
    for (std::size_t n = 0; n < f.nodes.size(); ++n) covered[n] += r.nodes[n].swept ? 1 : 0;
  }
  for (int c : covered) CHECK(c == 1);
}

TEST_CASE("Sweeper keeps totals on GUID and port when a node's LID changes", "[sweeper]") {
  ibfx::Fabric before = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, before, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[2].ports[1].narrow[IB_PC_XMT_WAIT_F] = 500;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  sweeper.sweep(before, {});
  // The SM restarts and gives the HCA LID 9; its counters moved on meanwhile.
  ibfx::Fabric after = before;
  after.nodes[1].lid = 9;
  after.nodes[1].ports[0].lid = 9;
  fake.nodes[9] = fake.nodes[2];
  fake.nodes.erase(2);
  fake.nodes[9].ports[1].narrow[IB_PC_XMT_WAIT_F] = 800;
  const SweepResult r = sweeper.sweep(after, {});
  CHECK(r.nodes[1].answered);
  CHECK(acc.find(PortKey{0x200, 1})->total[idx(Counter::kTransmitWait)] == 800);
}

TEST_CASE("Sweeper reads PortSamplesControl.Tick once and survives PMAs without it", "[sweeper]") {
  const ibfx::Fabric f = ibfx::test::star_fabric(2);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[1].sample_tick = 3;
  fake.nodes[2].sample_tick = -1;  // answers "unsupported attribute"
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  REQUIRE(sweeper.capabilities(0x100) != nullptr);
  CHECK(sweeper.capabilities(0x100)->sample_tick == 3);
  CHECK(sweeper.capabilities(0x200)->sample_tick == -1);
  CHECK(sweeper.capabilities(0x201)->sample_tick == 7);
  // The optional attribute failing does not make the node "not answering".
  CHECK(r.nodes[1].answered);
}

namespace {
// add_nodes() plus SMA identities: each LID answers NodeInfo as its node.
void add_identities(FakePma& fake, const Fabric& f) {
  fake.smp = true;
  for (const auto& n : f.nodes) fake.nodes[n.lid].guid = n.guid;
}
}  // namespace

TEST_CASE("Sweeper drops readings from a LID that now answers as another node", "[sweeper]") {
  // The SM restarted and swapped the LIDs of the two HCAs; discovery has not
  // caught up. Each old LID is still valid and answers, with the other
  // node's counters: what must hold is that neither port's totals take them.
  const ibfx::Fabric f = ibfx::test::star_fabric(2);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  add_identities(fake, f);
  fake.nodes[2].ports[1].narrow[IB_PC_XMT_WAIT_F] = 100;
  fake.nodes[3].ports[1].narrow[IB_PC_XMT_WAIT_F] = 7000;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult first = sweeper.sweep(f, {});
  CHECK(first.lid_mismatches == 0);
  CHECK(first.nodes[1].answered);
  CHECK(acc.find(PortKey{0x200, 1})->total[idx(Counter::kTransmitWait)] == 100);
  CHECK(acc.find(PortKey{0x201, 1})->total[idx(Counter::kTransmitWait)] == 7000);
  CHECK(fake.nodes[1].smps == 1);  // one per switch, not one per switch port
  CHECK(fake.nodes[2].smps == 1);

  std::swap(fake.nodes[2], fake.nodes[3]);
  const SweepResult stale = sweeper.sweep(f, {});
  CHECK(stale.lid_mismatches == 2);
  for (std::size_t n : {1u, 2u}) {
    INFO("node " << n);
    CHECK(stale.nodes[n].lid_moved);
    CHECK_FALSE(stale.nodes[n].answered);  // the exporter rediscovers on this
    CHECK_FALSE(stale.port_read[n][0]);
  }
  CHECK(stale.nodes[0].answered);  // the switch kept its LID
  CHECK(acc.find(PortKey{0x200, 1})->total[idx(Counter::kTransmitWait)] == 100);
  CHECK(acc.find(PortKey{0x201, 1})->total[idx(Counter::kTransmitWait)] == 7000);
  CHECK(acc.stats().external_clears[idx(Counter::kTransmitWait)] == 0);

  // Rediscovered: each node at its new LID, counters moved on meanwhile.
  ibfx::Fabric moved = f;
  std::swap(moved.nodes[1].lid, moved.nodes[2].lid);
  std::swap(moved.nodes[1].ports[0].lid, moved.nodes[2].ports[0].lid);
  fake.nodes[3].ports[1].narrow[IB_PC_XMT_WAIT_F] = 150;   // 0x200, now LID 3
  fake.nodes[2].ports[1].narrow[IB_PC_XMT_WAIT_F] = 7500;  // 0x201, now LID 2
  const SweepResult fresh = sweeper.sweep(moved, {});
  CHECK(fresh.lid_mismatches == 0);
  CHECK(fresh.nodes[1].answered);
  CHECK(fresh.nodes[2].answered);
  CHECK(acc.find(PortKey{0x200, 1})->total[idx(Counter::kTransmitWait)] == 150);
  CHECK(acc.find(PortKey{0x201, 1})->total[idx(Counter::kTransmitWait)] == 7500);
}

TEST_CASE("Sweeper checks the port, not just the node, behind an HCA port's LID", "[sweeper]") {
  const ibfx::Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  add_identities(fake, f);
  fake.nodes[2].local_port = 2;  // the LID now belongs to the HCA's other port
  fake.nodes[2].ports[1].narrow[IB_PC_XMT_WAIT_F] = 100;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  CHECK(r.nodes[1].lid_moved);
  CHECK(acc.find(PortKey{0x200, 1}) == nullptr);
}

TEST_CASE("Sweeper keeps readings when the SMA does not answer the identity check", "[sweeper]") {
  // A silent SMA is no evidence that the LID moved: the PMA there answered.
  const ibfx::Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  add_identities(fake, f);
  fake.nodes[2].ports[1].narrow[IB_PC_XMT_WAIT_F] = 100;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  fake.nodes[2].sma_silent = true;
  const SweepResult r = sweeper.sweep(f, {});
  CHECK(fake.nodes[2].smps == 2);  // tried, with the engine's retry
  CHECK_FALSE(r.nodes[1].lid_moved);
  CHECK(acc.find(PortKey{0x200, 1})->total[idx(Counter::kTransmitWait)] == 100);
  fake.nodes[2].ports[1].narrow[IB_PC_XMT_WAIT_F] = 300;
  sweeper.sweep(f, {});
  CHECK(acc.find(PortKey{0x200, 1})->total[idx(Counter::kTransmitWait)] == 300);
}

TEST_CASE("Sweeper sends no optional MAD to a node the SmGuard protects", "[sweeper]") {
  // HCA 0x200 (LID 2) is where the SM is bound: the PortSamplesControl
  // probe and counter clears stay away from it, its counters are read.
  Fabric f = ibfx::test::star_fabric(2);
  f.sm_lid = 2;
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[2].ports[1].narrow[IB_PC_ERR_SYM_F] = 65000;  // would be cleared
  fake.nodes[3].ports[1].narrow[IB_PC_ERR_SYM_F] = 65000;
  fake.nodes[2].ports[1].narrow[IB_PC_XMT_WAIT_F] = 42;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  SweepOptions opt;
  opt.clear = ClearPolicy{true, 0.75};
  opt.guard = SmGuard(f, LocalPort{});
  REQUIRE(opt.guard.protects(0x200));

  const SweepResult r = sweeper.sweep(f, opt);
  CHECK(fake.nodes[2].sample_controls == 0);
  CHECK(fake.nodes[1].sample_controls == 1);
  CHECK(fake.nodes[3].sample_controls == 1);
  CHECK(r.probes_withheld == 1);
  CHECK(fake.nodes[2].ports[1].clears == 0);
  CHECK(fake.nodes[3].ports[1].clears == 1);
  CHECK(r.clears_withheld == 1);
  CHECK(r.clears_sent == 1);
  // Read like any node, and up.
  CHECK(r.nodes[1].answered);
  CHECK(acc.find(PortKey{0x200, 1})->total[idx(Counter::kTransmitWait)] == 42);
  // No tick learnt: the configured assumption stays.
  REQUIRE(sweeper.capabilities(0x200) != nullptr);
  CHECK(sweeper.capabilities(0x200)->sample_tick == -1);

  // Later sweeps do not try again (ClassPortInfo is cached), and an empty
  // guard (the operator opted in) sends the probe like anywhere else.
  sweeper.sweep(f, opt);
  CHECK(fake.nodes[2].sample_controls == 0);
  sweeper.forget(0x200);  // its ClassPortInfo is asked again
  opt.guard = SmGuard();
  const SweepResult open = sweeper.sweep(f, opt);
  CHECK(fake.nodes[2].sample_controls == 1);
  CHECK(open.probes_withheld == 0);
  CHECK(sweeper.capabilities(0x200)->sample_tick == 7);
}

TEST_CASE("Sweeper probes PortSamplesControl only at a LID confirmed to be the node's",
          "[sweeper]") {
  // After an SM restart an old LID may belong to the SM's own port, which no
  // guard built from the stale fabric can know: the probe waits for the LID
  // check, and a LID that answers as another node gets none.
  const ibfx::Fabric f = ibfx::test::star_fabric(2);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  add_identities(fake, f);
  std::swap(fake.nodes[2], fake.nodes[3]);  // LIDs 2 and 3 swapped owners
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult r = sweeper.sweep(f, {});
  CHECK(r.lid_mismatches == 2);
  CHECK(fake.nodes[1].sample_controls == 1);  // the switch: confirmed
  CHECK(fake.nodes[2].sample_controls == 0);
  CHECK(fake.nodes[3].sample_controls == 0);
  CHECK(sweeper.capabilities(0x100)->sample_tick == 7);
}

TEST_CASE(
    "A sweep cut short by its budget marks nothing down, and the next resumes where it stopped",
    "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(8);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  REQUIRE(sweeper.sweep(f, {}).completed);  // all known to answer, capabilities cached

  // Now slow: 2 in flight, 200 MADs/s, 50 ms per sweep: about 10 of the 32
  // PortCounters(Extended) reads fit, fewer than the switch alone needs.
  engine.set_limits(MadEngineLimits{2, 1, milliseconds(50), 1, 200});
  SweepOptions slow;
  slow.budget = milliseconds(50);
  std::vector<std::vector<bool>> read(f.nodes.size());
  for (std::size_t n = 0; n < f.nodes.size(); ++n) read[n].assign(f.nodes[n].ports.size(), false);
  auto all_read = [&] {
    for (const auto& node : read) {
      for (bool r : node) {
        if (!r) return false;
      }
    }
    return true;
  };
  int sweeps = 0;
  while (!all_read() && sweeps < 32) {
    const SweepResult r = sweeper.sweep(f, slow);
    ++sweeps;
    CHECK_FALSE(r.completed);
    CHECK(r.stale_nodes > 0);
    CHECK(r.mads_timeout == 0);  // not asked is not a timeout
    for (std::size_t n = 0; n < f.nodes.size(); ++n) {
      INFO("sweep " << sweeps << ", node " << f.nodes[n].description);
      CHECK(r.nodes[n].swept);
      CHECK(r.nodes[n].answered);  // nobody reported down
      CHECK(r.nodes[n].stale == !r.nodes[n].reached);
      for (std::size_t i = 0; i < read[n].size(); ++i) {
        if (r.port_read[n][i]) read[n][i] = true;
      }
    }
  }
  // Every port refreshed within a few sweeps (32 reads, ~8 per sweep): the
  // sweeps resume where the last stopped, or the same first ports would be
  // read again and again. How many fit in 50 ms depends on the machine's
  // load (~4 sweeps when idle, 12 seen under a loaded CI), so the bound is
  // loose: a sweep that restarted from the top every time would never
  // finish.
  CHECK(all_read());
}

TEST_CASE("A cut-short sweep with LID checks leaves nothing for the next sweep", "[sweeper]") {
  // With SMPs, readings of a switch cut halfway are held for a NodeInfo
  // check that the budget cancels: the check must complete (cancelled) in
  // its own sweep. It used to stay queued, be sent first by the next sweep,
  // and check another node's LID against it: that node showed as moved and
  // not answering, with no MAD timed out (issue #19).
  const Fabric f = ibfx::test::star_fabric(8);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  add_identities(fake, f);
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  REQUIRE(sweeper.sweep(f, {}).completed);
  engine.set_limits(MadEngineLimits{2, 1, milliseconds(50), 1, 200});
  SweepOptions slow;
  slow.budget = milliseconds(50);
  std::size_t cut = 0;
  for (int sweeps = 0; sweeps < 12; ++sweeps) {
    const SweepResult r = sweeper.sweep(f, slow);
    cut += r.completed ? 0 : 1;
    CHECK(engine.pending() == 0);
    CHECK(r.lid_mismatches == 0);
    CHECK(r.mads_timeout == 0);
    for (std::size_t n = 0; n < f.nodes.size(); ++n) {
      INFO("sweep " << sweeps << ", node " << f.nodes[n].description);
      CHECK_FALSE(r.nodes[n].lid_moved);
      CHECK_FALSE((r.nodes[n].swept && !r.nodes[n].answered));
    }
  }
  CHECK(cut >= 6);
}

TEST_CASE("A node never reached yet is not reported at all by a cut-short sweep", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(8);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  MadEngine engine(fake, MadEngineLimits{1, 1, milliseconds(50), 1, 100});
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  SweepOptions slow;
  slow.budget = milliseconds(30);
  const SweepResult r = sweeper.sweep(f, slow);
  CHECK_FALSE(r.completed);
  std::size_t unknown = 0;
  for (const NodeSweep& ns : r.nodes) {
    CHECK_FALSE(ns.not_answering());  // nobody down
    unknown += ns.swept ? 0 : 1;
  }
  CHECK(unknown > 0);
}

TEST_CASE("Sweeper probes a node once, across rediscoveries, unless it changed", "[sweeper]") {
  const Fabric f = ibfx::test::star_fabric(3);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[3].sample_tick = -1;  // PortSamplesControl unsupported: asked once, not again
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult first = sweeper.sweep(f, {});
  CHECK(first.mads_sent == 4 + 4 + 12);  // ClassPortInfo, PortSamplesControl, 2 x 6 ports

  // A rediscovery: the same nodes, in another order.
  Fabric again;
  for (auto it = f.nodes.rbegin(); it != f.nodes.rend(); ++it) again.nodes.push_back(*it);
  for (FabricNode& n : again.nodes) {
    for (FabricPort& p : n.ports) {
      if (p.linked()) p.remote_node = static_cast<std::int32_t>(f.nodes.size()) - 1 - p.remote_node;
    }
  }
  again.index();
  const SweepResult second = sweeper.sweep(again, {});
  CHECK(second.mads_sent == 12);  // counters only: no probe repeated
  for (const NodeSweep& ns : second.nodes) CHECK(ns.answered);

  // gpu1 was replaced by another device model under the same GUID: only it
  // is probed again.
  again.nodes[1].device_id = 0x1021;
  REQUIRE(again.nodes[1].guid == 0x201);
  const SweepResult third = sweeper.sweep(again, {});
  CHECK(third.mads_sent == 12 + 2);
}

namespace {
constexpr std::uint16_t kRcvDetails = IB_GSI_PORT_RCV_ERROR_DETAILS;
constexpr std::uint16_t kXmitDetails = IB_GSI_PORT_XMIT_DISCARD_DETAILS;
constexpr std::uint16_t kVlWait = IB_GSI_PORT_PORT_VL_XMIT_WAIT_COUNTERS;

int optional_requests(FakePma& fake) {
  int n = 0;
  for (auto& [lid, node] : fake.nodes) {
    for (auto& [attr, count] : node.requests) {
      if (attr == kRcvDetails || attr == kXmitDetails || attr == kVlWait ||
          (attr >= IB_GSI_PORT_RCV_CON_CTRL && attr <= IB_GSI_PORT_VL_XMIT_TIME_CONG)) {
        n += count;
      }
    }
  }
  return n;
}
}  // namespace

TEST_CASE("Opt-in counter groups: not one MAD more while they are off", "[sweeper][groups]") {
  const Fabric f = ibfx::test::star_fabric(3);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  for (auto& [lid, node] : fake.nodes) node.optional_attrs = {kRcvDetails, kXmitDetails, kVlWait};
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  const SweepResult first = sweeper.sweep(f, {});
  CHECK(first.mads_sent == 4 + 4 + 12);  // as without the groups
  const SweepResult second = sweeper.sweep(f, {});
  CHECK(second.mads_sent == 12);
  CHECK(optional_requests(fake) == 0);
  CHECK(first.optional_probes + second.optional_reads == 0);
  CHECK(acc.lanes().size() == 0);
}

TEST_CASE("Opt-in counter groups: one probe per node and attribute, then one Get per port",
          "[sweeper][groups]") {
  const Fabric f = ibfx::test::star_fabric(2);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  // The switch implements the error details and per-VL PortXmitWait; HCA
  // 0x200 says "unsupported" (status 0x0C) to everything optional; HCA
  // 0x201 drops what it does not implement and has PortXmitDiscardDetails.
  fake.nodes[1].optional_attrs = {kRcvDetails, kXmitDetails, kVlWait};
  fake.nodes[3].optional_attrs = {kXmitDetails};
  fake.nodes[3].drop_unsupported = true;
  auto& sw2 = fake.nodes[1].ports[2];
  sw2.optional[kRcvDetails][IB_PC_RCV_LOCAL_PHY_ERR_F] = 11;
  sw2.optional[kRcvDetails][IB_PC_RCV_LOOPING_ERR_F] = 3;
  sw2.optional[kXmitDetails][IB_PC_XMT_NEIGH_MTU_DISC_F] = 4;
  sw2.optional[kVlWait][IB_PC_PORT_VL_XMIT_WAIT3_F] = 500;
  fake.nodes[3].ports[1].optional[kXmitDetails][IB_PC_XMT_INACT_DISC_F] = 8;
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  SweepOptions opt;
  opt.groups.error_details = true;
  opt.groups.vl_xmit_wait = true;

  // First sweep: ClassPortInfo, then the probes (3 attributes x 3 nodes)
  // beside PortSamplesControl; no port is read for the groups yet.
  const SweepResult first = sweeper.sweep(f, opt);
  CHECK(first.optional_probes == 9);
  CHECK(first.optional_reads == 0);
  CHECK(optional_requests(fake) == 9);
  CHECK(sweeper.support(0x100, OptionalAttr::kRcvErrorDetails) == Sweeper::Support::kSupported);
  CHECK(sweeper.support(0x100, OptionalAttr::kVlXmitWait) == Sweeper::Support::kSupported);
  CHECK(sweeper.support(0x200, OptionalAttr::kRcvErrorDetails) == Sweeper::Support::kUnsupported);
  CHECK(sweeper.support(0x201, OptionalAttr::kXmitDiscardDetails) == Sweeper::Support::kSupported);
  // No answer is remembered as no: it would time out every sweep.
  CHECK(sweeper.support(0x201, OptionalAttr::kRcvErrorDetails) == Sweeper::Support::kUnsupported);
  CHECK(sweeper.support(0x100, OptionalAttr::kRcvConCtrl) == Sweeper::Support::kUnknown);  // off
  for (const NodeSweep& ns : first.nodes) CHECK(ns.answered);

  // Second sweep: 3 Gets per switch port (2 ports), 1 on HCA 0x201, no probe.
  const SweepResult second = sweeper.sweep(f, opt);
  CHECK(second.optional_probes == 0);
  CHECK(second.optional_reads == 3 * 2 + 1);
  CHECK(second.mads_sent == 2 * 4 + second.optional_reads);
  const auto* st = acc.find(PortKey{0x100, 2});
  REQUIRE(st != nullptr);
  CHECK(st->total[idx(Counter::kPortLocalPhysicalErrors)] == 11);
  CHECK(st->bits[idx(Counter::kPortLocalPhysicalErrors)] == 16);
  CHECK(st->total[idx(Counter::kPortLoopingErrors)] == 3);
  CHECK(st->total[idx(Counter::kPortNeighborMtuDiscards)] == 4);
  CHECK(st->bits[idx(Counter::kPortPktRcvFecn)] == 0);  // congestion control is off
  const auto* vl = acc.lanes().find(PortKey{0x100, 2}, LaneCounter::kVlXmitWait);
  REQUIRE(vl != nullptr);
  CHECK(vl->total[3] == 500);
  CHECK(vl->total[0] == 0);
  // The HCA that said no exports nothing of the groups, its port the rest.
  CHECK(acc.find(PortKey{0x200, 1})->bits[idx(Counter::kPortLocalPhysicalErrors)] == 0);
  CHECK(acc.find(PortKey{0x200, 1})->bits[idx(Counter::kTransmitWait)] == 32);
  CHECK(acc.find(PortKey{0x201, 1})->total[idx(Counter::kPortInactiveDiscards)] == 8);

  // Counters move and wrap like any other: an out-of-band clear keeps the
  // total monotonic.
  sw2.optional[kRcvDetails][IB_PC_RCV_LOCAL_PHY_ERR_F] = 2;
  sw2.optional[kVlWait][IB_PC_PORT_VL_XMIT_WAIT3_F] = 700;
  sweeper.sweep(f, opt);
  CHECK(st->total[idx(Counter::kPortLocalPhysicalErrors)] == 13);
  CHECK(vl->total[3] == 700);

  // Congestion control turned on later (a reload): only its attributes are
  // probed, once.
  opt.groups.congestion_control = true;
  const int before = optional_requests(fake);
  const SweepResult cc = sweeper.sweep(f, opt);
  CHECK(cc.optional_probes == 5 * 3);
  sweeper.sweep(f, opt);
  CHECK(optional_requests(fake) - before == 5 * 3 + 2 * 7);  // probes, then reads as before

  // A node replaced under the same GUID is asked again.
  Fabric changed = f;
  changed.nodes[2].device_id = 0x1021;
  const SweepResult after = sweeper.sweep(changed, opt);
  CHECK(after.optional_probes == 8);  // every enabled attribute, only for 0x201
}

TEST_CASE("Opt-in counter groups: a node the SmGuard protects is neither probed nor read",
          "[sweeper][groups]") {
  Fabric f = ibfx::test::star_fabric(2);
  f.sm_lid = 2;
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  for (auto& [lid, node] : fake.nodes) node.optional_attrs = {kRcvDetails, kXmitDetails};
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  SweepOptions opt;
  opt.groups.error_details = true;
  opt.guard = SmGuard(f, LocalPort{});
  REQUIRE(opt.guard.protects(0x200));
  const SweepResult first = sweeper.sweep(f, opt);
  CHECK(first.probes_withheld == 1);
  sweeper.sweep(f, opt);
  CHECK(fake.nodes[2].requests[kRcvDetails] == 0);
  CHECK(fake.nodes[2].requests[kXmitDetails] == 0);
  CHECK(fake.nodes[2].sample_controls == 0);
  CHECK(fake.nodes[3].requests[kRcvDetails] == 2);  // probe + one read
  CHECK(sweeper.support(0x200, OptionalAttr::kRcvErrorDetails) == Sweeper::Support::kUnsupported);
  // Its other counters are read as usual.
  CHECK(acc.find(PortKey{0x200, 1}) != nullptr);
}

TEST_CASE("Opt-in counter groups: a samples-only PMA is not probed", "[sweeper][groups]") {
  const Fabric f = ibfx::test::star_fabric(1);
  FakePma fake;
  add_nodes(fake, f, pma_cap::kExtWidth | pma_cap::kXmitWait, 0);
  fake.nodes[2].cap_mask |= pma_cap::kSamplesOnly;
  for (auto& [lid, node] : fake.nodes) node.optional_attrs = {kVlWait};
  MadEngine engine(fake, fast_limits());
  CounterAccumulator acc;
  Sweeper sweeper(engine, acc);
  SweepOptions opt;
  opt.groups.vl_xmit_wait = true;
  sweeper.sweep(f, opt);
  sweeper.sweep(f, opt);
  CHECK(fake.nodes[2].requests[kVlWait] == 0);
  CHECK(fake.nodes[1].requests[kVlWait] == 2);
  CHECK(sweeper.support(0x200, OptionalAttr::kVlXmitWait) == Sweeper::Support::kUnsupported);
}
