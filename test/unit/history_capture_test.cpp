// A sweep's status model reduced to a history frame: each switch's worst
// port, the roots, the sweep health; the switch table shared while the
// fabric stays the same.
#include "views/history_capture.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "history/history_json.h"
#include "test/support/json_schema.h"
#include "test/support/status_support.h"
#include "views/history_status_model.h"
#include "views/status_html.h"
#include "views/status_json.h"

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

TEST_CASE("a history frame keeps the unhealthy links and the page of then shows them",
          "[history][links]") {
  test::StatusFixture fx = test::status_fixture();
  fx.snapshot->links = test::unhealthy_links(fx);
  StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(m.links.size() == 2);
  m.links[1].node.name = "leaf <script>x</script>";  // untrusted, as every name
  const HistoryFramePtr f = make_history_frame(m, *fx.snapshot, nullptr);
  REQUIRE(f->links.size() == 2);
  CHECK(f->links_total == 2);
  CHECK(f->links[0].condition == "down");
  CHECK(f->links[0].node.guid == 0xdead);
  CHECK(f->links[0].downs_last_hour == 3);
  // Downs beyond what the state file reads back are kept at its bound.
  m.links[0].downs_last_hour = kHistoryMaxDownsLastHour + 7;
  CHECK(make_history_frame(m, *fx.snapshot, nullptr)->links[0].downs_last_hour ==
        kHistoryMaxDownsLastHour);
  CHECK(f->links[1].condition == "ber_error");
  REQUIRE(f->links[1].symbol_ber.has_value());
  CHECK(*f->links[1].symbol_ber == Approx(*m.links[1].symbol_ber).epsilon(1e-6));
  CHECK(f->links[1].since == m.links[1].since);

  const StatusModel then = history_status_model(*f, f->time + 1, nullptr);
  REQUIRE(then.links.size() == 2);
  CHECK(then.links_total == 2);
  const std::string json = render_status_json(then);
  CHECK(test::validates_against(json, IBFX_SOURCE_DIR "/docs/status.schema.json"));
  const auto j = nlohmann::json::parse(json);
  CHECK(j["links"][0]["condition"] == "down");
  CHECK(j["links"][0]["node_name"].is_null());  // was no longer in the fabric
  CHECK(j["links"][0]["downs_last_hour"] == 3);
  CHECK(j["links"][1]["condition"] == "ber_error");
  CHECK(j["links"][1]["since"] == m.links[1].since);
  const std::string html = render_status_html(then);
  CHECK(html.find("<table id=\"link-health\">") != std::string::npos);
  CHECK(html.find("ber_error") != std::string::npos);
  CHECK(html.find("<script>x") == std::string::npos);
  CHECK(html.find("Not kept by the history") != std::string::npos);

  // At most kHistoryMaxLinks a frame; the total says how many there were.
  m.links.resize(kHistoryMaxLinks + 5, m.links[1]);
  m.links_total = 40;
  const HistoryFramePtr many = make_history_frame(m, *fx.snapshot, nullptr);
  CHECK(many->links.size() == kHistoryMaxLinks);
  CHECK(many->links_total == 40);
}

TEST_CASE("the page of then lists the roots, links and sweep as the live page did: its own rows",
          "[history][links]") {
  test::StatusFixture fx = test::status_fixture();
  fx.snapshot->links = test::unhealthy_links(fx);
  StatusModel live = build_status_model(*fx.snapshot);
  REQUIRE_FALSE(live.roots.empty());
  REQUIRE_FALSE(live.links.empty());
  live.roots[0].sending_jobs = {"4711 train (alice)"};  // what its senders' jobs would give
  const HistoryFramePtr f = make_history_frame(live, *fx.snapshot, nullptr);
  const StatusModel then = history_status_model(*f, f->time, nullptr);
  // Every field the history keeps comes back as the live page had it, in
  // the names both write (history/history_json.h).
  REQUIRE(then.roots.size() == live.roots.size());
  for (std::size_t i = 0; i < live.roots.size(); ++i) {
    CHECK(history_root_json(then.roots[i]) == history_root_json(live.roots[i]));
  }
  REQUIRE(then.links.size() == std::min(live.links.size(), kHistoryMaxLinks));
  for (std::size_t i = 0; i < then.links.size(); ++i) {
    CHECK(history_link_json(then.links[i]) == history_link_json(live.links[i]));
    // Fabric indices do not outlive the fabric.
    CHECK(then.links[i].node.node == kNoNode);
  }
  CHECK(history_sweep_json(then.sweep) == history_sweep_json(live.sweep));
  CHECK(then.roots[0].sending_jobs == live.roots[0].sending_jobs);
}

}  // namespace ibfx
