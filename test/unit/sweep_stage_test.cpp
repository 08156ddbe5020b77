// The sweep stage (sweep/sweep_stage.h): each sweep runs with the options
// the configuration asks for, a reload changes them for the next sweep and
// keeps the totals, the SM's node gets no optional MAD, a forgotten node
// loses its totals and capabilities, and the budget leaves the interval's
// room for what follows a sweep, never less than two retry chains.
#include "sweep/sweep_stage.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "test/support/controlled_pma.h"
#include "test/support/fake_fabric.h"
#include "test/support/fake_pma.h"

using namespace ibfx;
using ibfx::test::ControlledPma;
using ibfx::test::fake_for;
using ibfx::test::FakePma;
using std::chrono::milliseconds;

namespace {

// star_fabric: switch 0x100 at LID 1; HCAs 0x200.. at LIDs 2..
Config stage_config() {
  Config config;
  config.mad.timeout = milliseconds(10);
  config.mad.retries = 0;
  return config;
}

}  // namespace

TEST_CASE(
    "SweepStage sweeps as configured and a reload applies to the next sweep with the totals kept",
    "[sweep_stage]") {
  const Fabric fabric = test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  fake.nodes[2].ports[1].extended[IB_PC_EXT_XMT_BYTES_F] = 400;
  Config config = stage_config();
  config.counters.include_hcas = false;
  SweepStage stage(std::make_unique<ControlledPma>(fake), config);

  SweepResult r = stage.sweep(fabric, LocalPort{}, {});
  CHECK(r.completed);
  CHECK(fake.nodes[1].requests[kAttrPortCountersExtended] > 0);
  CHECK(fake.nodes[2].requests[kAttrPortCountersExtended] == 0);  // HCAs not read
  CHECK(stage.accumulator().find(PortKey{0x200, 1}) == nullptr);
  CHECK(stage.engine_stats().sent == fake.sent);

  config.counters.include_hcas = true;
  stage.reload(config);
  r = stage.sweep(fabric, LocalPort{}, {});
  CHECK(r.completed);
  REQUIRE(stage.accumulator().find(PortKey{0x200, 1}) != nullptr);
  CHECK(stage.accumulator()
            .find(PortKey{0x200, 1})
            ->total[static_cast<std::size_t>(Counter::kTransmitDataBytes)] == 400);
  CHECK(stage.accumulator().find(PortKey{0x100, 1}) != nullptr);  // kept across the reload
  // Every node's PortSamplesControl.Tick, as its PMA said.
  CHECK(stage.device_ticks(fabric) == std::vector<int>{7, 7, 7});
}

TEST_CASE("SweepStage keeps optional MADs away from the SM's node unless told otherwise",
          "[sweep_stage]") {
  Fabric fabric = test::star_fabric(2);
  fabric.sm_lid = 3;  // the master SM on gpu1 (0x201)
  FakePma fake = fake_for(fabric);
  Config config = stage_config();
  SweepStage guarded(std::make_unique<ControlledPma>(fake), config);
  guarded.sweep(fabric, LocalPort{}, {});
  CHECK(fake.nodes[3].sample_controls == 0);
  CHECK(fake.nodes[2].sample_controls == 1);
  CHECK(guarded.device_ticks(fabric) == std::vector<int>{7, 7, -1});

  FakePma opted_out = fake_for(fabric);
  config.counters.probe_sm_and_local_ports = true;
  SweepStage unguarded(std::make_unique<ControlledPma>(opted_out), config);
  unguarded.sweep(fabric, LocalPort{}, {});
  CHECK(opted_out.nodes[3].sample_controls == 1);
  CHECK(unguarded.device_ticks(fabric) == std::vector<int>{7, 7, 7});
}

TEST_CASE("SweepStage forgets a node's totals and capabilities", "[sweep_stage]") {
  const Fabric fabric = test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  SweepStage stage(std::make_unique<ControlledPma>(fake), stage_config());
  stage.sweep(fabric, LocalPort{}, {});
  REQUIRE(stage.accumulator().find(PortKey{0x200, 1}) != nullptr);

  stage.forget(0x200, {1});
  CHECK(stage.accumulator().find(PortKey{0x200, 1}) == nullptr);
  CHECK(stage.accumulator().find(PortKey{0x201, 1}) != nullptr);
  CHECK(stage.device_ticks(fabric) == std::vector<int>{7, -1, 7});
  // The next sweep asks its PMA's capabilities again.
  const int class_port_info = fake.nodes[2].requests[kAttrClassPortInfo];
  stage.sweep(fabric, LocalPort{}, {});
  CHECK(fake.nodes[2].requests[kAttrClassPortInfo] == class_port_info + 1);
}

TEST_CASE("SweepStage's budget: the interval less what follows a sweep but never under two retries",
          "[sweep_stage]") {
  // One MAD at a time, each answered 2 ms late: some 50 MADs, about 100 ms
  // a sweep. Two 20 ms retry chains are 40 ms.
  const Fabric fabric = test::star_fabric(8);
  Config config;
  config.mad.timeout = milliseconds(20);
  config.mad.retries = 0;
  config.mad.global_inflight = 1;
  config.mad.per_node_inflight = 1;
  config.sweep_interval = std::chrono::seconds(2);

  FakePma whole = fake_for(fabric);
  auto slow = std::make_unique<ControlledPma>(whole);
  slow->delay_ms = 2;
  SweepStage roomy(std::move(slow), config);
  CHECK(roomy.sweep(fabric, LocalPort{}, {}).completed);

  // What followed the last sweep took the whole interval: the sweep gets
  // two retry chains, not nothing.
  FakePma cut = fake_for(fabric);
  slow = std::make_unique<ControlledPma>(cut);
  slow->delay_ms = 2;
  SweepStage squeezed(std::move(slow), config);
  squeezed.after_sweep_took(std::chrono::seconds(2));
  const SweepResult r = squeezed.sweep(fabric, LocalPort{}, {});
  CHECK_FALSE(r.completed);
  CHECK(r.duration_seconds >= 0.03);
  CHECK(r.duration_seconds < 1.0);
}
