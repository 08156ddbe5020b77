// RouteReader against a fake transport whose switches' SMAs answer
// SwitchInfo and LinearForwardingTable (test/support/fake_pma.h): full
// reads, the budget, re-routes found by the rotation, stale and departed
// switches, a changed LinearFDBTop, cancellation, and never a Set.
#include "sweep/route_reader.h"

#include <infiniband/mad.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>

#include "config/node_name_map.h"
#include "mad/smp_switch.h"
#include "sweep/sweep_stage.h"
#include "test/support/fake_pma.h"

namespace {

using ibfx::Fabric;
using ibfx::FabricNode;
using ibfx::MadEngine;
using ibfx::MadEngineLimits;
using ibfx::RouteReader;
using ibfx::RoutesConfig;
using ibfx::RouteTables;
using ibfx::test::FakePma;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::uint8_t kMethodGet = 0x01;

// `switches` switches at LIDs 1.., GUIDs 0x1000..; `hcas` HCAs after them.
Fabric make_fabric(int switches, int hcas) {
  Fabric f;
  for (int i = 0; i < switches + hcas; ++i) {
    FabricNode n;
    const bool sw = i < switches;
    n.type = sw ? ibfx::NodeType::kSwitch : ibfx::NodeType::kHca;
    n.guid = (sw ? 0x1000u : 0x2000u) + static_cast<std::uint64_t>(i);
    n.lid = static_cast<std::uint16_t>(i + 1);
    f.nodes.push_back(n);
  }
  f.index();
  return f;
}

// Each switch's table: itself on port 0, every other LID on some port,
// LID 0 nowhere.
std::vector<std::uint8_t> table_for(std::uint16_t own_lid, std::size_t top) {
  std::vector<std::uint8_t> lft(top + 1);
  lft[0] = ibfx::kNoRoute;
  for (std::size_t l = 1; l <= top; ++l) {
    lft[l] = l == own_lid ? 0 : static_cast<std::uint8_t>(1 + (l + own_lid) % 7);
  }
  return lft;
}

FakePma fake_switches(const Fabric& f) {
  FakePma fake;
  fake.smp = true;
  std::uint16_t top = 0;
  for (const FabricNode& n : f.nodes) top = std::max(top, n.lid);
  for (const FabricNode& n : f.nodes) {
    ibfx::test::FakeNode& node = fake.nodes[n.lid];
    node.guid = n.guid;
    if (n.type != ibfx::NodeType::kSwitch) continue;
    node.sma_switch = true;
    node.lft = table_for(n.lid, top);
  }
  return fake;
}

MadEngineLimits reader_limits() {
  MadEngineLimits limits;
  limits.timeout = 5ms;
  limits.retries = 1;
  return limits;
}

// One sweep's worth: submit at `now`, the engine's run, publish.
struct ReaderBench {
  Fabric fabric;
  FakePma fake;
  MadEngine engine;
  RouteReader reader;
  Clock::time_point now = Clock::now();
  std::chrono::milliseconds interval{1000};

  ReaderBench(int switches, int hcas, RoutesConfig config = {})
      : fabric(make_fabric(switches, hcas)),
        fake(fake_switches(fabric)),
        engine(fake, reader_limits()),
        reader(engine, config) {}

  std::uint64_t step(std::chrono::milliseconds advance = std::chrono::milliseconds(1000)) {
    now += advance;
    const std::uint64_t before = reader.stats().smps_sent;
    reader.submit(fabric, now, interval);
    engine.run(Clock::now() + 10s);
    reader.after_run();
    return reader.stats().smps_sent - before;
  }
  // Steps until every switch's table is whole (at most `limit` steps).
  int read_all(int limit = 100) {
    for (int i = 1; i <= limit; ++i) {
      step();
      const auto t = reader.tables();
      if (t && reader.stats().incomplete == 0 && !reader.stats().full_read_running) return i;
    }
    return -1;
  }
  const std::vector<std::uint8_t>& lft(std::uint16_t lid) { return fake.nodes.at(lid).lft; }
};

bool only_gets(const FakePma& fake) {
  for (const auto& [lid, node] : fake.nodes) {
    for (const auto& [method, count] : node.smp_methods) {
      if (method != kMethodGet) return false;
    }
  }
  return true;
}

void check_tables_match(ReaderBench& b) {
  const auto tables = b.reader.tables();
  REQUIRE(tables);
  std::size_t switches = 0;
  for (const FabricNode& n : b.fabric.nodes) {
    if (n.type != ibfx::NodeType::kSwitch) continue;
    ++switches;
    const ibfx::SwitchRoutes* s = tables->find(n.guid);
    REQUIRE(s != nullptr);
    INFO("switch LID " << n.lid);
    CHECK(s->lid == n.lid);
    CHECK(s->complete);
    CHECK_FALSE(s->stale);
    CHECK(s->linear_fdb_top == b.lft(n.lid).size() - 1);
    CHECK(s->out_port == b.lft(n.lid));
    CHECK(s->read_at != std::chrono::system_clock::time_point{});
  }
  CHECK(tables->switches.size() == switches);
}

}  // namespace

TEST_CASE("RouteReader: SMP decoders read libibmad's SwitchInfo fields and raw LFT bytes",
          "[route_reader]") {
  ibfx::PmaData data{};
  mad_set_field(data.data(), 0, IB_SW_LINEAR_FDB_CAP_F, 0xC000);
  mad_set_field(data.data(), 0, IB_SW_LINEAR_FDB_TOP_F, 300);
  mad_set_field(data.data(), 0, IB_SW_DEF_PORT_F, 7);
  mad_set_field(data.data(), 0, IB_SW_LIDS_PER_PORT_F, 1);
  const ibfx::SmpSwitchInfo info = ibfx::decode_smp_switch_info(data);
  CHECK(info.linear_fdb_cap == 0xC000);
  CHECK(info.linear_fdb_top == 300);
  CHECK(info.default_port == 7);
  CHECK(info.lids_per_port == 1);
  CHECK(info.usable_top() == 300);
  CHECK(ibfx::lft_blocks(300) == 5);
  CHECK(ibfx::lft_blocks(63) == 1);
  CHECK(ibfx::lft_blocks(64) == 2);
  // A garbled top is held to the cap and to the unicast range.
  mad_set_field(data.data(), 0, IB_SW_LINEAR_FDB_CAP_F, 48);
  CHECK(ibfx::decode_smp_switch_info(data).usable_top() == 47);
  mad_set_field(data.data(), 0, IB_SW_LINEAR_FDB_CAP_F, 0);
  mad_set_field(data.data(), 0, IB_SW_LINEAR_FDB_TOP_F, 0xFFFF);
  CHECK(ibfx::decode_smp_switch_info(data).usable_top() == ibfx::kMaxUnicastLid);

  ibfx::PmaData block{};
  for (std::size_t i = 0; i < 64; ++i) block[i] = static_cast<std::uint8_t>(i + 1);
  block[64] = 0xEE;  // past the block: not an entry
  const ibfx::LftBlock entries = ibfx::decode_smp_lft_block(block);
  CHECK(entries[0] == 1);
  CHECK(entries[63] == 64);
}

TEST_CASE("RouteReader: a full read of every switch's table, with SMP Gets only",
          "[route_reader]") {
  ReaderBench b(4, 150);  // LIDs 1..154: 3 blocks a switch
  CHECK_FALSE(b.reader.tables());
  const int steps = b.read_all();
  REQUIRE(steps > 0);
  CHECK(steps <= 2);  // 4 x (1 + 3) SMPs fit one sweep's budget
  check_tables_match(b);
  const auto tables = b.reader.tables();
  CHECK(tables->version >= 1);
  CHECK(tables->reroutes == 0);
  CHECK(tables->full_read_finished != std::chrono::system_clock::time_point{});
  CHECK(tables->full_read_seconds >= 0);
  CHECK(b.reader.stats().full_reads == 1);
  CHECK(b.reader.stats().smps_failed == 0);
  CHECK(only_gets(b.fake));
  // HCAs get no route SMP.
  for (const FabricNode& n : b.fabric.nodes) {
    if (n.type == ibfx::NodeType::kHca) CHECK(b.fake.nodes.at(n.lid).smps == 0);
  }
  // SwitchInfo once and each block once per switch, for the full read.
  CHECK(b.fake.nodes.at(1).smp_attrs.at(ibfx::kAttrSwitchInfo) >= 1);
  CHECK(b.fake.nodes.at(1).smp_attrs.at(ibfx::kAttrLinearForwardingTable) >= 3);
}

TEST_CASE("RouteReader: nothing changed, the same tables are handed on", "[route_reader]") {
  RoutesConfig config;
  config.reread_interval = 1s;  // every table re-read each step
  ReaderBench b(3, 100, config);
  REQUIRE(b.read_all() > 0);
  const auto first = b.reader.tables();
  for (int i = 0; i < 5; ++i) b.step();  // rotation: every block read again, all equal
  CHECK(b.reader.stats().smps_sent > 3 * 3 * 2);
  CHECK(b.reader.tables() == first);
  CHECK(b.reader.tables()->version == first->version);
}

TEST_CASE("RouteReader: each call sends at most its budget", "[route_reader]") {
  RoutesConfig config;
  config.smps_per_second = 10;
  ReaderBench b(20, 300, config);  // 20 switches x (1 + 6 blocks): 140 SMPs a full read
  for (int i = 0; i < 5; ++i) CHECK(b.step(1000ms) <= 10);
  CHECK(b.step(500ms) <= 5);
  // A long pause is capped at two intervals' worth.
  CHECK(b.step(60000ms) <= 20);
  // Spread over many switches, not spent on one.
  std::size_t asked = 0;
  for (int lid = 1; lid <= 20; ++lid) asked += b.fake.nodes.at(lid).smps > 0 ? 1 : 0;
  CHECK(asked >= 10);
  CHECK(b.reader.stats().full_reads == 0);  // 140 SMPs need more than 6 calls of <= 10
  // At the budget the read finishes, in about 140 / 10 calls.
  const int steps = b.read_all(40);
  REQUIRE(steps > 0);
  check_tables_match(b);
}

TEST_CASE("RouteReader: between full reads every table is re-read once per reread_interval",
          "[route_reader]") {
  RoutesConfig config;
  config.smps_per_second = 1000;  // far more than the pace needs
  config.reread_interval = 60s;
  ReaderBench b(20, 300, config);  // 20 switches x (1 + 6 blocks): 140 SMPs a table set
  // A cable between switch LID 1 and the first HCA: its state is watched.
  b.fabric.nodes[0].ports.push_back({});
  b.fabric.nodes[0].ports[0].number = 1;
  b.fabric.nodes[0].ports[0].state = 4;
  b.fabric.nodes[0].ports[0].phys_state = 5;
  b.fabric.nodes[0].ports[0].remote_node = 20;
  b.fabric.nodes[0].ports[0].remote_port = 1;
  REQUIRE(b.read_all() > 0);
  // A minute of 1 s sweeps re-reads every table about once, not sixty times.
  std::uint64_t minute = 0;
  for (int i = 0; i < 60; ++i) minute += b.step();
  CHECK(minute >= 140 - 20);
  CHECK(minute <= 140 + 20);
  // The cable goes down: the SM re-routes, so for a minute the tables are
  // re-read at the whole budget.
  b.fabric.nodes[0].ports[0].state = 1;
  b.fabric.nodes[0].ports[0].phys_state = 3;
  const std::uint64_t after = b.step() + b.step();
  CHECK(after >= 140);
  for (int i = 0; i < 60; ++i) b.step();
  // Settled: back to the pace.
  std::uint64_t settled = 0;
  for (int i = 0; i < 10; ++i) settled += b.step();
  CHECK(settled <= 140 / 6 + 10);
  check_tables_match(b);
}

TEST_CASE("RouteReader: under mad.max_mads_per_second it takes a tenth of the cap",
          "[route_reader]") {
  RoutesConfig config;
  config.smps_per_second = 10000;
  ReaderBench b(20, 300, config);
  MadEngineLimits limits = reader_limits();
  limits.max_mads_per_second = 50;  // the counters' budget: 5 SMPs a second for the tables
  b.engine.set_limits(limits);
  for (int i = 0; i < 3; ++i) CHECK(b.step(1000ms) <= 5);
  limits.max_mads_per_second = 0;  // no cap: the routes' own rate
  b.engine.set_limits(limits);
  CHECK(b.step(1000ms) > 5);
}

TEST_CASE("RouteReader: a re-route found by the rotation replaces the table and reads all",
          "[route_reader]") {
  RoutesConfig config;
  config.smps_per_second = 20;
  config.reread_interval = 1s;
  ReaderBench b(3, 200, config);  // 3 x (1 + 4) SMPs a full read
  REQUIRE(b.read_all() > 0);
  const auto before = b.reader.tables();
  const std::uint64_t full_reads = b.reader.stats().full_reads;
  // The SM moves LID 150 (block 2) of switch LID 2 to another port.
  b.fake.nodes.at(2).lft[150] = 9;
  int steps = 0;
  while (b.reader.tables()->version == before->version && steps < 50) {
    b.step();
    ++steps;
  }
  REQUIRE(b.reader.tables()->version > before->version);
  // Found within about one rotation of every block (15 SMPs at 20/s).
  CHECK(steps <= 4);
  REQUIRE(b.read_all() > 0);
  check_tables_match(b);
  const auto after = b.reader.tables();
  CHECK(after->find(0x1001)->port_for(150) == 9);
  CHECK(before->find(0x1001)->port_for(150) != 9);  // the old one is untouched
  CHECK(after->reroutes == 1);
  CHECK(b.reader.stats().full_reads == full_reads + 1);
  CHECK(only_gets(b.fake));
}

TEST_CASE("RouteReader: a switch that stops answering keeps its table, stale", "[route_reader]") {
  RoutesConfig config;
  config.reread_interval = 1s;  // the rotation reaches it at the next step
  ReaderBench b(3, 60, config);
  REQUIRE(b.read_all() > 0);
  const auto before = b.reader.tables();
  b.fake.nodes.at(3).silent = true;
  b.step();
  b.step();
  auto tables = b.reader.tables();
  REQUIRE(tables != before);
  const ibfx::SwitchRoutes* s = tables->find(0x1002);
  REQUIRE(s != nullptr);
  CHECK(s->stale);
  CHECK(s->complete);
  CHECK(s->out_port == b.lft(3));
  CHECK(tables->version == before->version);  // the content did not change
  CHECK(b.reader.stats().stale == 1);
  // One probe a sweep while silent, not a window of timeouts.
  const std::uint64_t failed = b.reader.stats().smps_failed;
  b.step();
  CHECK(b.reader.stats().smps_failed - failed <= 1);
  // A full pass (a new switch joins) is not held up by it.
  b.fabric.nodes.push_back(FabricNode{});
  FabricNode& added = b.fabric.nodes.back();
  added.type = ibfx::NodeType::kSwitch;
  added.guid = 0x3000;
  added.lid = 70;
  b.fabric.index();
  ibfx::test::FakeNode& fake_added = b.fake.nodes[70];
  fake_added.guid = 0x3000;
  fake_added.sma_switch = true;
  fake_added.lft = table_for(70, 70);
  const std::uint64_t full_reads = b.reader.stats().full_reads;
  for (int i = 0; i < 5; ++i) b.step();
  CHECK(b.reader.stats().full_reads == full_reads + 1);
  CHECK(b.reader.tables()->find(0x3000)->complete);
  CHECK(b.reader.tables()->find(0x1002)->stale);
  // Back: no longer stale, read whole again.
  b.fake.nodes.at(3).silent = false;
  for (int i = 0; i < 5; ++i) b.step();
  CHECK_FALSE(b.reader.tables()->find(0x1002)->stale);
  CHECK(b.reader.stats().stale == 0);
}

TEST_CASE("RouteReader: a switch that leaves the fabric is dropped", "[route_reader]") {
  ReaderBench b(3, 60);
  REQUIRE(b.read_all() > 0);
  const std::uint64_t version = b.reader.tables()->version;
  // Discovery no longer has switch LID 3.
  b.fabric.nodes.erase(b.fabric.nodes.begin() + 2);
  b.fabric.index();
  b.step();
  auto tables = b.reader.tables();
  CHECK(tables->version > version);
  CHECK(tables->find(0x1002) == nullptr);
  CHECK(tables->switches.size() == 2);
  REQUIRE(tables->find(0x1001) != nullptr);
  CHECK(tables->find(0x1001)->out_port == b.lft(2));
  // forget() drops one at once.
  b.reader.forget(0x1001);
  b.reader.after_run();
  tables = b.reader.tables();
  CHECK(tables->find(0x1001) == nullptr);
  CHECK(tables->switches.size() == 1);
  CHECK(tables->by_guid.size() == 1);
}

TEST_CASE("RouteReader: a changed LinearFDBTop resizes the table", "[route_reader]") {
  ReaderBench b(2, 60);  // top 62: one block
  REQUIRE(b.read_all() > 0);
  CHECK(b.reader.tables()->find(0x1000)->out_port.size() == 63);
  // New HCAs got LIDs up to 200: the SM routed them on every switch.
  for (const std::uint16_t lid : {1, 2}) b.fake.nodes.at(lid).lft = table_for(lid, 200);
  int steps = 0;
  while (b.reader.tables()->find(0x1000)->linear_fdb_top != 200 && steps < 20) {
    b.step();
    ++steps;
  }
  REQUIRE(b.read_all() > 0);
  check_tables_match(b);
  CHECK(b.reader.tables()->find(0x1000)->out_port.size() == 201);
  CHECK(b.reader.tables()->reroutes == 2);
  // And shrinks again.
  for (const std::uint16_t lid : {1, 2}) b.fake.nodes.at(lid).lft = table_for(lid, 40);
  for (int i = 0; i < 10; ++i) b.step();
  check_tables_match(b);
  CHECK(b.reader.tables()->find(0x1001)->port_for(100) == ibfx::kNoRoute);
}

TEST_CASE("RouteReader: SMPs the sweep's deadline cancels are asked again", "[route_reader]") {
  ReaderBench b(3, 100);
  b.now += 1s;
  b.reader.submit(b.fabric, b.now, b.interval);
  b.engine.run(Clock::now() - 1ms);  // the deadline has passed: all cancelled
  b.reader.after_run();
  CHECK(b.reader.stats().smps_cancelled > 0);
  CHECK(b.reader.stats().smps_answered == 0);
  CHECK(b.reader.stats().smps_failed == 0);
  CHECK_FALSE(b.reader.tables());
  CHECK(b.reader.stats().stale == 0);  // not asked is no evidence of silence
  REQUIRE(b.read_all() > 0);
  check_tables_match(b);
}

TEST_CASE("RouteReader: disabled or without SMPs it sends nothing", "[route_reader]") {
  RoutesConfig off;
  off.enabled = false;
  ReaderBench b(2, 10, off);
  for (int i = 0; i < 3; ++i) CHECK(b.step() == 0);
  CHECK_FALSE(b.reader.tables());
  CHECK(b.fake.sent == 0);
  // Enabled on reload: read whole; disabled again: the tables go.
  b.reader.reload(RoutesConfig{});
  REQUIRE(b.read_all() > 0);
  const std::uint64_t version = b.reader.tables()->version;
  b.reader.reload(off);
  CHECK_FALSE(b.reader.tables());
  b.reader.reload(RoutesConfig{});
  REQUIRE(b.read_all() > 0);
  CHECK(b.reader.tables()->version > version);  // never an old number for new content

  ReaderBench no_qp0(2, 10);
  no_qp0.fake.smp = false;
  for (int i = 0; i < 3; ++i) CHECK(no_qp0.step() == 0);
  CHECK_FALSE(no_qp0.reader.tables());
}

TEST_CASE("RouteReader: SweepStage reads routes within its sweeps", "[route_reader]") {
  const Fabric fabric = make_fabric(3, 40);
  auto owned = std::make_unique<FakePma>(fake_switches(fabric));
  FakePma& fake = *owned;
  ibfx::Config config;
  config.mad.timeout = std::chrono::milliseconds(20);
  config.sweep_interval = std::chrono::milliseconds(1000);
  ibfx::SweepStage stage(std::move(owned), config);
  const ibfx::NodeNameMap names;
  CHECK_FALSE(stage.routes());
  const ibfx::SweepResult first = stage.sweep(fabric, ibfx::LocalPort{}, names);
  CHECK(first.completed);
  const auto tables = stage.routes();
  REQUIRE(tables);
  for (const std::uint16_t lid : {1, 2, 3}) {
    const ibfx::SwitchRoutes* s = tables->find(0x1000u + lid - 1);
    REQUIRE(s != nullptr);
    CHECK(s->complete);
    CHECK(s->out_port == fake.nodes.at(lid).lft);
  }
  CHECK(stage.route_stats().smps_answered >= 3 * 2);
  stage.forget(0x1000, {});
  CHECK(stage.routes()->find(0x1000) == nullptr);
  // Off on reload: no table, no more SMPs.
  config.routes.enabled = false;
  stage.reload(config);
  CHECK_FALSE(stage.routes());
  auto& attrs = fake.nodes.at(2).smp_attrs;
  const int infos = attrs[ibfx::kAttrSwitchInfo];
  const int blocks = attrs[ibfx::kAttrLinearForwardingTable];
  stage.sweep(fabric, ibfx::LocalPort{}, names);
  CHECK(attrs[ibfx::kAttrSwitchInfo] == infos);
  CHECK(attrs[ibfx::kAttrLinearForwardingTable] == blocks);
  CHECK(only_gets(fake));
}
