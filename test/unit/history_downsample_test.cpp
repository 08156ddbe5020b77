// Folding sweeps into coarse steps: the worst of each switch, roots by
// port at their highest score, jobs at their worst, the worst sweep health,
// and a discovery inside a step.
#include "history/history_downsample.h"

#include <catch2/catch.hpp>

#include "test/support/history_support.h"

namespace ibfx {

TEST_CASE("a step starts on a multiple of its length", "[history]") {
  CHECK(history_step_start(125.5, 60) == 120);
  CHECK(history_step_start(120, 60) == 120);
  CHECK(history_step_start(59.9, 60) == 0);
}

TEST_CASE("folding keeps each switch's worst sweep, with its port and U", "[history]") {
  auto a = test::history_frame(61, {0.1, 0.5, -1});
  auto b = test::history_frame(71, {0.4, 0.2, 0.3});
  b->cells[1].port = 9;
  a->cells[0].flags = HistoryCell::kRoot;
  b->cells[2].flags = HistoryCell::kNotAnswering;
  const HistoryFramePtr first = fold_into_step(nullptr, *a, 60);
  CHECK(first->time == 60);
  CHECK(first->span == 60);
  CHECK(first->sweeps == 1);
  const HistoryFramePtr both = fold_into_step(first.get(), *b, 60);
  CHECK(both->time == 60);
  CHECK(both->sweeps == 2);
  CHECK(ratio_value(both->cells[0].stall) == Approx(0.4));
  CHECK(both->cells[0].port == 1);
  // The root flag of the first sweep stays on the step though W came from the second.
  CHECK(both->cells[0].flags == HistoryCell::kRoot);
  CHECK(ratio_value(both->cells[1].stall) == Approx(0.5));
  CHECK(ratio_value(both->cells[1].utilization) == Approx(0.25));
  CHECK(both->cells[1].port == 2);  // a's port, not b's 9
  // Unknown in one sweep, known in the other: the known one.
  CHECK(ratio_value(both->cells[2].stall) == Approx(0.3));
  CHECK(both->cells[2].flags == HistoryCell::kNotAnswering);
}

TEST_CASE("folding keeps each root at its highest score and the worst sweep health", "[history]") {
  auto a = test::history_frame(0, {0, 0});
  auto b = test::history_frame(10, {0, 0});
  a->roots = {test::history_root(1, 3, 5.0), test::history_root(2, 1, 1.0)};
  b->roots = {test::history_root(2, 1, 7.0, "slow_receiver"), test::history_root(1, 3, 2.0)};
  a->sweep.nodes_answering = 1;
  a->sweep.duration_seconds = 4;
  b->sweep.completed = false;
  a->jobs = {HistoryJob{42, "j", "u", 0.3, {0}}};
  b->jobs = {HistoryJob{42, "j", "u", 0.1, {1}}, HistoryJob{43, "k", "u", 0.2, {}}};
  const HistoryFramePtr step = fold_into_step(fold_into_step(nullptr, *a, 60).get(), *b, 60);
  REQUIRE(step->roots.size() == 2);
  CHECK(step->roots[0].guid == 2);
  CHECK(step->roots[0].score == 7.0);
  CHECK(step->roots[0].cause == "slow_receiver");
  CHECK(step->roots[1].guid == 1);
  CHECK(step->roots[1].score == 5.0);
  CHECK(step->sweep.nodes_answering == 1);
  CHECK(step->sweep.duration_seconds == 4);
  CHECK_FALSE(step->sweep.completed);
  REQUIRE(step->jobs.size() == 2);
  CHECK(step->jobs[0].id == 42);
  CHECK(step->jobs[0].stall_max == Approx(0.3));
  CHECK(step->jobs[0].switches == std::vector<std::uint32_t>{0, 1});
}

TEST_CASE("folding across a discovery maps switches by GUID and drops the gone ones", "[history]") {
  // Before: GUIDs 1, 2, 3. After: 3, 1, 4 (2 left, 4 appeared, order changed).
  auto before = test::history_frame(0, {0.9, 0.8, 0.1});
  auto table = std::make_shared<HistorySwitchTable>();
  table->switches = {before->table->switches[2], before->table->switches[0],
                     HistorySwitch{4, "sw4", Tier::kSpine, kNoRail, -1}};
  auto after = test::history_frame(10, {0.2, 0.1, 0.3}, table);
  const HistoryFramePtr step =
      fold_into_step(fold_into_step(nullptr, *before, 60).get(), *after, 60);
  REQUIRE(step->table == table);
  REQUIRE(step->cells.size() == 3);
  CHECK(ratio_value(step->cells[0].stall) == Approx(0.2));  // GUID 3: max(0.1, 0.2)
  CHECK(ratio_value(step->cells[1].stall) == Approx(0.9));  // GUID 1: max(0.9, 0.1)
  CHECK(ratio_value(step->cells[2].stall) == Approx(0.3));  // GUID 4: new
}

TEST_CASE("folding keeps the unhealthy links of every sweep of the step", "[history]") {
  auto a = test::history_frame(1000, {0.1, 0.2});
  a->links = {test::history_link(1, 3, "flapping", 900),
              test::history_link(2, 5, "ber_warning", 990)};
  a->links[0].downs_last_hour = 4;
  a->links_total = 2;
  auto b = test::history_frame(1010, {0.1, 0.2}, a->table);
  b->links = {test::history_link(1, 3, "down", 1005)};
  b->links_total = 1;
  const HistoryFramePtr folded = fold_into_step(fold_into_step(nullptr, *a, 60).get(), *b, 60);
  REQUIRE(folded->links.size() == 2);
  // The newer sweep's first, with its condition, the earlier start and the most downs.
  CHECK(folded->links[0].node.guid == 1);
  CHECK(folded->links[0].condition == "down");
  CHECK(folded->links[0].since == 900);
  CHECK(folded->links[0].downs_last_hour == 4);
  CHECK(folded->links[1].node.guid == 2);
  CHECK(folded->links_total == 2);
  // Bounded whatever the sweeps held.
  auto c = test::history_frame(1020, {0.1, 0.2}, a->table);
  for (int p = 1; p <= 30; ++p) c->links.push_back(test::history_link(1, p, "link_errors", 1000));
  c->links.resize(kHistoryMaxLinks);
  CHECK(fold_into_step(folded.get(), *c, 60)->links.size() == kHistoryMaxLinks);
}

}  // namespace ibfx
