// The analysis stage (pipeline/analysis_stage.h): a sweep's ports, with the
// accumulator's totals, reach the analyzer in fabric order, only the ports
// the sweep read make samples, and a reload classifies the topology again.
#include "pipeline/analysis_stage.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "test/support/fake_fabric.h"

using namespace ibfx;

namespace {

void read_traffic(CounterAccumulator& acc, std::uint64_t bytes) {
  CounterReading r;
  r.set(Counter::kTransmitWait, bytes / 4, 64);
  r.set(Counter::kTransmitDataBytes, bytes, 64);
  acc.apply(PortKey{0x100, 1}, r, {});
  acc.apply(PortKey{0x200, 1}, r, {});
}

// A star fabric of two HCAs, its stage and accumulator, from a fixed time.
struct AnalysisBench {
  std::shared_ptr<const Fabric> fabric = std::make_shared<const Fabric>(test::star_fabric(2));
  std::vector<std::string> names = std::vector<std::string>(fabric->nodes.size(), "node");
  std::vector<int> ticks = std::vector<int>(fabric->nodes.size(), -1);
  CounterAccumulator acc;
  AnalysisStage stage{AnalysisConfig{}};
  std::chrono::system_clock::time_point t0{std::chrono::seconds(1'000'000)};
};

}  // namespace

TEST_CASE("AnalysisStage: two sweeps make an interval of the ports they read", "[analysis_stage]") {
  AnalysisBench bench;
  auto& [fabric, names, ticks, acc, stage, t0] = bench;

  read_traffic(acc, 1000);
  const SweepAnalysis first =
      stage.analyze(fabric, names, ticks, test::swept_whole(*fabric, t0), acc);
  REQUIRE(first.topology);
  CHECK(first.result.ports.empty());  // one sweep is not an interval

  read_traffic(acc, 5000);
  SweepResult second_sweep = test::swept_whole(*fabric, t0 + std::chrono::seconds(10));
  second_sweep.port_read[1][0] = false;  // gpu0's port: not read this sweep
  const SweepAnalysis second = stage.analyze(fabric, names, ticks, second_sweep, acc);
  CHECK(second.interval_seconds == Approx(10));
  CHECK(second.topology == first.topology);
  // Every port this sweep read, in fabric order (one without totals as
  // zeros): all but gpu0's.
  REQUIRE(second.samples.size() == fabric->port_count() - 1);
  REQUIRE(second.result.ports.size() == fabric->port_count() - 1);
  CHECK(second.result.ports[0].node == 0);
  CHECK(second.result.ports.back().node == 2);

  stage.reload(AnalysisConfig{});
  const SweepAnalysis third = stage.analyze(
      fabric, names, ticks, test::swept_whole(*fabric, t0 + std::chrono::seconds(20)), acc);
  CHECK(third.topology != first.topology);  // classified again
}

TEST_CASE(
    "AnalysisStage judges each sweep's cables by its links: settings and a reload changes them",
    "[analysis_stage]") {
  AnalysisBench bench;
  // References, not a structured binding: clang 14 (the ASan tree's
  // compiler) cannot capture a binding in a lambda, a C++20 rule it lacks.
  auto& fabric = bench.fabric;
  auto& names = bench.names;
  auto& ticks = bench.ticks;
  auto& acc = bench.acc;
  auto& stage = bench.stage;
  auto& t0 = bench.t0;
  // gpu0's end of its cable (switch port 1) recovers from link errors
  // `recoveries` times in all.
  auto sweep = [&](int s, std::uint64_t recoveries) {
    CounterReading r;
    r.set(Counter::kLinkErrorRecovery, 0, 8);
    for (const PortKey key : {PortKey{0x100, 1}, PortKey{0x100, 2}, PortKey{0x201, 1}}) {
      acc.apply(key, r, {});
    }
    r.set(Counter::kLinkErrorRecovery, recoveries, 8);
    acc.apply(PortKey{0x200, 1}, r, {});
    const SweepResult swept_now = test::swept_whole(*fabric, t0 + std::chrono::seconds(10 * s));
    const SweepAnalysis analysis = stage.analyze(fabric, names, ticks, swept_now, acc);
    return stage.judge_links(fabric, analysis, swept_now, acc, 1'000'000.0 + 10 * s);
  };
  CHECK(sweep(0, 0)->links.empty());
  // Two recoveries: under the default three.
  CHECK(sweep(1, 2)->links.empty());
  AnalysisConfig strict;
  strict.links.link_error_recoveries = 1;
  stage.reload(strict);
  const auto report = sweep(2, 3);
  REQUIRE(report->links.size() == 1);
  CHECK(report->links[0].condition == LinkCondition::kLinkErrors);
  CHECK(report->links[0].a.guid == 0x100);
  CHECK(report->links[0].b.guid == 0x200);
}
