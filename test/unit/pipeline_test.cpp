// The pipeline (pipeline/pipeline.h): its stages in their order, each
// sweep's frame through all of them, a reload prepared by every stage
// before any applies (a bad setting applies nothing), a stop that every
// stage hears.
#include "pipeline/pipeline.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/utc_time.h"
#include "config/config_error.h"
#include "test/support/fake_fabric.h"

using namespace ibfx;

namespace {

// A frame of `fabric` swept whole at `at`, with `acc`'s totals.
SweepFrame pipeline_frame(const std::shared_ptr<const Fabric>& fabric, const SweepResult& sweep,
                          const CounterAccumulator& acc) {
  SweepFrame frame;
  frame.snapshot.fabric = fabric;
  frame.snapshot.sweep = &sweep;
  frame.snapshot.accumulator = &acc;
  frame.snapshot.node_names.assign(fabric->nodes.size(), "node");
  frame.snapshot.device_ticks.assign(fabric->nodes.size(), -1);
  frame.now = unix_seconds(sweep.started_at);
  return frame;
}

void apply_all(const std::vector<StageReload>& reloads) {
  for (const StageReload& r : reloads) {
    if (r.apply) r.apply(false);
  }
  for (const StageReload& r : reloads) {
    if (r.finish) r.finish();
  }
}

}  // namespace

TEST_CASE("Pipeline: the stages in their order, each sweep's frame through all of them",
          "[pipeline]") {
  Config config;
  Pipeline pipeline(config, AnalysisConfig{});
  CHECK(pipeline.stage_names() == std::vector<std::string>{"routes", "analysis", "senders", "jobs",
                                                           "events", "nodes", "receipts"});

  auto fabric = std::make_shared<const Fabric>(test::star_fabric(2));
  CounterAccumulator acc;
  const std::chrono::system_clock::time_point t0{std::chrono::seconds(1'000'000)};
  const SweepResult first_sweep = test::swept_whole(*fabric, t0);
  SweepFrame first = pipeline_frame(fabric, first_sweep, acc);
  pipeline.run(first);
  REQUIRE(first.snapshot.analysis.topology);
  // Each stage's part is there: link health, events, nodes; no route
  // model (no tables read), no receipts (jobs off).
  CHECK(first.snapshot.links);
  CHECK(first.snapshot.events);
  CHECK(first.snapshot.link_events);
  CHECK(first.snapshot.nodes);
  CHECK_FALSE(first.snapshot.routes.model);
  CHECK_FALSE(first.snapshot.receipts.enabled);
  CHECK(first.route_evidence == nullptr);

  const SweepResult second_sweep = test::swept_whole(*fabric, t0 + std::chrono::seconds(10));
  SweepFrame second = pipeline_frame(fabric, second_sweep, acc);
  pipeline.run(second);
  CHECK(second.snapshot.analysis.interval_seconds == Approx(10));
  CHECK(second.snapshot.analysis.topology == first.snapshot.analysis.topology);

  SECTION("a bad setting: every stage prepared before any applies, so nothing is") {
    Config bad = config;
    bad.jobs.host_regex = "([";
    CHECK_THROWS_AS(pipeline.prepare_reload({bad, AnalysisConfig{}}), ConfigError);
    const SweepResult third_sweep = test::swept_whole(*fabric, t0 + std::chrono::seconds(20));
    SweepFrame third = pipeline_frame(fabric, third_sweep, acc);
    pipeline.run(third);
    // The analysis stage kept its settings: the topology was not
    // classified again.
    CHECK(third.snapshot.analysis.topology == first.snapshot.analysis.topology);
  }
  SECTION("a good one reaches the stages when applied") {
    apply_all(pipeline.prepare_reload({config, AnalysisConfig{}}));
    const SweepResult third_sweep = test::swept_whole(*fabric, t0 + std::chrono::seconds(20));
    SweepFrame third = pipeline_frame(fabric, third_sweep, acc);
    pipeline.run(third);
    CHECK(third.snapshot.analysis.topology != first.snapshot.analysis.topology);
  }
  pipeline.stop();
  pipeline.stop();  // idempotent
}

TEST_CASE("Pipeline: a frame without a fabric passes no stage", "[pipeline]") {
  Pipeline pipeline(Config{}, AnalysisConfig{});
  SweepResult sweep;
  CounterAccumulator acc;
  SweepFrame frame;
  frame.snapshot.sweep = &sweep;
  frame.snapshot.accumulator = &acc;
  pipeline.run(frame);
  CHECK_FALSE(frame.snapshot.analysis.topology);
  CHECK_FALSE(frame.snapshot.events);
}
