// The events stage (pipeline/events_stage.h): a sweep that changes the events
// is saved, and the next start restores them; without a state directory
// nothing is kept.
#include "pipeline/events_stage.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "base/utc_time.h"
#include "test/support/fake_fabric.h"
#include "test/support/temp_dir.h"

using namespace ibfx;

namespace {

// An analysis of `fabric` whose forest is one root, the switch's port 1.
SweepAnalysis one_root(double score) {
  SweepAnalysis a;
  a.interval_seconds = 1;
  PortScore ps;
  ps.node = 0;
  ps.port_index = 0;
  ps.valid = true;
  a.result.ports = {ps};
  CongestionForest& f = a.result.congestion;
  f.parent = {kNoPort};
  f.root = {0};
  f.roots.push_back({0, CongestionCause::kIncast, score, 0});
  return a;
}

std::vector<std::string> names_of(const Fabric& fabric) {
  std::vector<std::string> names;
  for (const FabricNode& n : fabric.nodes) names.push_back(n.description);
  return names;
}

}  // namespace

TEST_CASE("EventsStage saves a sweep that changed the events, and the next start restores them",
          "[events_stage]") {
  test::TempDir dir;
  const Fabric fabric = test::star_fabric(2);
  // A minute ago: within the history's bounds when the next start restores.
  const double now = unix_seconds_now() - 60;
  {
    EventsStage stage;
    stage.keep_in(dir.path());
    REQUIRE(stage.restored() != nullptr);
    CHECK(stage.restored()->empty());  // first start
    stage.observe(one_root(2), fabric, names_of(fabric), now, {});
    REQUIRE(stage.events()->size() == 1);
    CHECK(stage.events()->front().active());
    CHECK(stage.counters().started[static_cast<std::size_t>(CongestionCause::kIncast)] == 1);
    stage.stop();
    stage.stop();  // idempotent
  }
  EventsStage again;
  again.keep_in(dir.path());
  REQUIRE(again.restored() != nullptr);
  REQUIRE(again.restored()->size() == 1);
  CHECK(again.restored()->front().id == 1);
  CHECK(again.restored()->front().peak_score == 2);
  CHECK(again.events() == again.restored());
  again.stop();
}

TEST_CASE("EventsStage keeps the re-routes in route_events.json across a restart",
          "[events_stage][routes]") {
  test::TempDir dir;
  {
    EventsStage stage;
    stage.keep_in(dir.path());
    CHECK_FALSE(stage.take_restored_routes().has_value());  // first start
    RouteTracker routes;
    RouteChangeState s;
    RouteChange c;
    c.id = 1;
    c.at = 1764900000;
    c.entries_changed = 7;
    c.destinations_moved = 7;
    c.switches_changed = 1;
    s.changes.push_back(c);
    s.changes_total = 1;
    s.next_id = 2;
    routes.restore(s);
    stage.observe_routes(routes, 1764900001);
    stage.stop();
  }
  EventsStage again;
  again.keep_in(dir.path());
  auto restored = again.take_restored_routes();
  REQUIRE(restored.has_value());
  REQUIRE(restored->changes.size() == 1);
  CHECK(restored->changes[0].entries_changed == 7);
  CHECK(restored->changes_total == 1);
  CHECK(restored->next_id == 2);
  CHECK_FALSE(again.take_restored_routes().has_value());  // handed over once
  again.stop();
}

TEST_CASE("EventsStage without a state directory keeps the events in memory only",
          "[events_stage]") {
  const Fabric fabric = test::star_fabric(2);
  EventsStage stage;
  stage.keep_in("");
  CHECK(stage.restored() == nullptr);
  // The first sweep has no analysis result: no evidence, no change.
  stage.observe(SweepAnalysis{}, fabric, names_of(fabric), 1764720000, {});
  CHECK(stage.events()->empty());
  stage.observe(one_root(2), fabric, names_of(fabric), 1764720001, {});
  CHECK(stage.events()->size() == 1);
  stage.stop();
}
