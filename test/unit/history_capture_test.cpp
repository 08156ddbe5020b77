// A sweep's status model reduced to a history frame: each switch's worst
// port, the roots, the sweep health; the switch table shared while the
// fabric stays the same.
#include "views/history_capture.h"

#include <catch2/catch.hpp>

#include "test/support/status_support.h"

namespace ibfx {

TEST_CASE("a history frame keeps each switch's worst port, the roots and the sweep", "[history]") {
  const test::StatusFixture fx = test::status_fixture();
  const StatusModel m = build_status_model(*fx.snapshot);
  const HistoryFramePtr f = make_history_frame(m, *fx.snapshot, nullptr);
  CHECK(f->time == m.sweep.timestamp_seconds);
  CHECK(f->span == 0);
  REQUIRE(f->table->switches.size() == m.switches.size());
  REQUIRE(f->cells.size() == m.switches.size());
  for (std::size_t i = 0; i < m.switches.size(); ++i) {
    INFO(m.switches[i].name);
    CHECK(f->table->switches[i].name == m.switches[i].name);
    CHECK(f->table->switches[i].guid == m.switches[i].guid);
    CHECK(f->cells[i].port == m.switches[i].worst_port);
    CHECK(ratio_value(f->cells[i].stall) == Approx(m.switches[i].stall).margin(1e-4));
    CHECK(((f->cells[i].flags & HistoryCell::kRoot) != 0) == m.switches[i].root);
  }
  REQUIRE(f->roots.size() == m.roots.size());
  REQUIRE(!f->roots.empty());
  CHECK(f->roots[0].name == "leaf-r0-0");
  CHECK(f->roots[0].port == fx.root_port);
  CHECK(f->roots[0].score == m.roots[0].score);
  CHECK(f->roots[0].cause == m.roots[0].cause);
  CHECK(f->sweep.nodes_answering == m.sweep.nodes_answering);
  CHECK(f->sweep.ports == m.sweep.ports);

  // The next sweep of the same fabric shares the table.
  const HistoryFramePtr next = make_history_frame(m, *fx.snapshot, f->table);
  CHECK(next->table == f->table);
}

}  // namespace ibfx
