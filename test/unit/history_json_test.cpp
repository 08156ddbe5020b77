// /history.json: frames in [from, to] with per-switch arrays laid out as the
// newest fabric's switches, tier and rail maxima, a coarser step when asked
// for or when the range is long, and the schema in docs/.
#include "history/history_json.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test/support/history_support.h"
#include "test/support/json_schema.h"

namespace ibfx {

TEST_CASE("history.json answers the frames of the range, as the newest switches", "[history]") {
  HistoryFrames h;
  auto a = test::history_frame(1000, {0.1, 0.6, -1});
  a->roots = {test::history_root(2, 5, 3.0)};
  a->roots[0].name = "<script>\"x\"</script>\xff";
  a->jobs = {HistoryJob{4711, "train", "alice", 0.6, {1}}};
  a->cells[1].flags = HistoryCell::kRoot;
  a->links = {test::history_link(3, 2, "ber_error", 990)};
  a->links[0].symbol_ber = 1e-10;
  a->links_total = 1;
  auto b = test::history_frame(1010, {0.2, 0.0, 0.3});
  auto c = test::history_frame(1020, {0.0, 0.0, 0.0});
  h.frames = {a, b, c};
  const auto all = nlohmann::json::parse(render_history_json(h, 1000, 1020, 0));
  CHECK(all["frames"].size() == 3);
  CHECK(all["oldest_seconds"] == 1000);
  REQUIRE(all["switches"].size() == 3);
  CHECK(all["switches"][0]["node_name"] == "sw1");
  CHECK(all["switches"][0]["rail"] == 0);
  const auto& first = all["frames"][0];
  CHECK(first["stall_ratio"][1] == Approx(0.6));
  CHECK(first["stall_ratio"][2].is_null());
  CHECK(first["port"][1] == 2);
  CHECK(first["root_switches"] == nlohmann::json::array({1}));
  CHECK(first["tiers"]["leaf"] == Approx(0.6));
  CHECK(first["rails"]["1"] == Approx(0.6));  // sw2 is index 1: rail 1
  CHECK(first["rails"]["0"] == Approx(0.1));
  CHECK(first["roots"][0]["cause"] == "incast");
  CHECK(first["jobs"][0]["id"] == "4711");
  CHECK(first["links"][0]["condition"] == "ber_error");
  CHECK(first["links"][0]["node_name"] == "sw3");
  CHECK(first["links"][0]["symbol_ber"] == Approx(1e-10));
  CHECK(first["links"][0]["remote_symbol_ber"].is_null());
  CHECK(first["links_total"] == 1);
  CHECK(all["frames"][1]["links"].empty());

  // A range: only the frames in it.
  CHECK(nlohmann::json::parse(render_history_json(h, 1005, 1015, 0))["frames"].size() == 1);
  // A step: folded, the worst of each.
  const auto folded = nlohmann::json::parse(render_history_json(h, 0, 2000, 120));
  REQUIRE(folded["frames"].size() == 1);
  CHECK(folded["frames"][0]["time"] == 960);
  CHECK(folded["frames"][0]["sweeps"] == 3);
  CHECK(folded["frames"][0]["stall_ratio"][2] == Approx(0.3));
  CHECK(folded["frames"][0]["links"].size() == 1);

  const std::string schema = IBFX_SOURCE_DIR "/docs/history.schema.json";
  CHECK(test::validates_against(render_history_json(h, 1000, 1020, 0), schema));
  CHECK(test::validates_against(render_history_json(h, 0, 2000, 120), schema));
  CHECK(test::validates_against(render_history_json(HistoryFrames{}, 0, 10, 0), schema));
}

TEST_CASE("a long range is answered at a step that keeps it bounded", "[history]") {
  HistoryFrames h;
  const auto table = test::history_table(2);
  for (int t = 0; t < 3000; ++t)
    h.frames.push_back(test::history_frame(t * 10.0, {0.1, 0.2}, table));
  const auto j = nlohmann::json::parse(render_history_json(h, 0, 30000, 0));
  CHECK(j["frames"].size() <= kHistoryJsonMaxFrames);
  CHECK(j["step_seconds"].get<double>() >= 20);
}

}  // namespace ibfx
