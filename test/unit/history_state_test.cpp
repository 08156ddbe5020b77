// The history's file format: every frame back as it was (cells, roots,
// jobs, sweep health, shared switch tables, hostile names), and a file
// truncated, flipped, of another format or version refused as a whole.
#include "history/history_state.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "history/history_json.h"
#include "test/support/history_support.h"

namespace ibfx {
namespace {

template <class Row>
nlohmann::json rows_json(const std::vector<Row>& rows, nlohmann::json (*row_json)(const Row&)) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) out.push_back(row_json(r));
  return out;
}

HistoryFrames sample_history() {
  const auto table = test::history_table(3);
  auto coarse = test::history_frame(960, {0.1, 0.2, -1}, table);
  coarse->span = 60;
  coarse->sweeps = 6;
  auto sweep = test::history_frame(1030, {0.7, 0.0, 0.3}, table);
  sweep->cells[0].flags = HistoryCell::kRoot;
  PageRoot root = test::history_root(1, 4, 8.5);
  root.name = "leaf <script>alert(1)</script> \"'&";
  root.remote.name = "host\xff mlx5_0";  // invalid UTF-8 survives: CBOR strings are bytes here
  root.jobs = {"4711 train (alice)"};
  sweep->roots = {root};
  sweep->jobs = {HistoryJob{4711, "train", "alice", 0.7, {0, 2}}};
  PageLink link = test::history_link(2, 7, "ber_error", 1000);
  link.node.name = "leaf <b>\"x\"</b>";
  link.symbol_ber = 2.5e-9;
  link.symbol_ber_at_least = true;
  link.downs_last_hour = 3;
  link.jobs = {"4711 train (alice)"};
  sweep->links = {link, test::history_link(3, 1, "down", 1020)};
  sweep->links_total = 5;
  sweep->sweep.duration_seconds = 1.5;
  sweep->sweep.interval_seconds = 10;
  auto other = test::history_frame(1040, {0.1}, test::history_table(1, 77));
  HistoryFrames h;
  h.frames = {coarse, sweep, other};
  return h;
}

}  // namespace

TEST_CASE("the history file gives back every frame as it was", "[history]") {
  const HistoryFrames h = sample_history();
  const std::string bytes = encode_history_state(h, 1041);
  std::vector<HistoryFramePtr> back;
  std::string error;
  REQUIRE(decode_history_state(bytes, back, error));
  CHECK(error.empty());
  REQUIRE(back.size() == 3);
  for (std::size_t i = 0; i < back.size(); ++i) {
    INFO(i);
    CHECK(back[i]->time == h.frames[i]->time);
    CHECK(back[i]->span == h.frames[i]->span);
    CHECK(back[i]->sweeps == h.frames[i]->sweeps);
    CHECK(back[i]->cells == h.frames[i]->cells);
    // The page's rows compare by every field they have, as /history.json
    // writes them (they have no operator==: a live row compared by its
    // page part alone would look equal to a different one).
    CHECK(rows_json(back[i]->roots, history_root_json) ==
          rows_json(h.frames[i]->roots, history_root_json));
    CHECK(back[i]->jobs == h.frames[i]->jobs);
    CHECK(rows_json(back[i]->links, history_link_json) ==
          rows_json(h.frames[i]->links, history_link_json));
    CHECK(back[i]->links_total == h.frames[i]->links_total);
    CHECK(history_sweep_json(back[i]->sweep) == history_sweep_json(h.frames[i]->sweep));
    CHECK(back[i]->table->switches == h.frames[i]->table->switches);
  }
  // One table for the frames that shared one: memory stays bounded after a restart.
  CHECK(back[0]->table == back[1]->table);
  CHECK(back[1]->table != back[2]->table);
}

TEST_CASE("a history file saved before link conditions were kept still loads", "[history]") {
  // The same format without "links" and "links_total", as the daemon wrote
  // it before the history kept link conditions: its frames have none.
  HistoryFrames h = sample_history();
  const std::string bytes = encode_history_state(h, 1041);
  nlohmann::json j = nlohmann::json::from_cbor(bytes);
  for (nlohmann::json& f : j["frames"]) {
    f.erase("links");
    f.erase("links_total");
  }
  const std::vector<std::uint8_t> old = nlohmann::json::to_cbor(j);
  std::vector<HistoryFramePtr> back;
  std::string error;
  REQUIRE(decode_history_state(std::string(old.begin(), old.end()), back, error));
  REQUIRE(back.size() == 3);
  CHECK(back[1]->links.empty());
  CHECK(back[1]->links_total == 0);
  CHECK(rows_json(back[1]->roots, history_root_json) ==
        rows_json(h.frames[1]->roots, history_root_json));
  // More links than a frame keeps, or a BER out of range: refused.
  j = nlohmann::json::from_cbor(bytes);
  j["frames"][1]["links"][0]["symbol_ber"] = 2;
  const std::vector<std::uint8_t> bad = nlohmann::json::to_cbor(j);
  CHECK_FALSE(decode_history_state(std::string(bad.begin(), bad.end()), back, error));
  CHECK(error.find("symbol_ber") != std::string::npos);
  j = nlohmann::json::from_cbor(bytes);
  j["frames"][1]["links"][0]["downs_last_hour"] = kHistoryMaxDownsLastHour + 1;
  const std::vector<std::uint8_t> downs = nlohmann::json::to_cbor(j);
  CHECK_FALSE(decode_history_state(std::string(downs.begin(), downs.end()), back, error));
  CHECK(error.find("downs_last_hour") != std::string::npos);
  j = nlohmann::json::from_cbor(bytes);
  for (int i = 0; i < 30; ++i) j["frames"][1]["links"].push_back(j["frames"][1]["links"][0]);
  const std::vector<std::uint8_t> many = nlohmann::json::to_cbor(j);
  CHECK_FALSE(decode_history_state(std::string(many.begin(), many.end()), back, error));
}

TEST_CASE("a truncated, flipped, foreign or newer history file is refused as a whole",
          "[history]") {
  const std::string bytes = encode_history_state(sample_history(), 1041);
  std::vector<HistoryFramePtr> back;
  std::string error;
  for (std::size_t n = 0; n < bytes.size(); n += 13) {
    INFO(n);
    CHECK_FALSE(decode_history_state(bytes.substr(0, n), back, error));
    CHECK(back.empty());
    CHECK_FALSE(error.empty());
  }
  CHECK_FALSE(decode_history_state("{\"format\": \"x\"}", back, error));
  CHECK(error == "not CBOR (truncated or corrupt)");
  // Valid CBOR, not ours.
  const std::vector<std::uint8_t> other = nlohmann::json::to_cbor(nlohmann::json{{"a", 1}});
  CHECK_FALSE(decode_history_state(std::string(other.begin(), other.end()), back, error));
  CHECK(error == "not a history state file");
  nlohmann::json newer = nlohmann::json::from_cbor(bytes);
  newer["version"] = 2;
  const std::vector<std::uint8_t> v2 = nlohmann::json::to_cbor(newer);
  CHECK_FALSE(decode_history_state(std::string(v2.begin(), v2.end()), back, error));
  CHECK(error == "version 2, this daemon reads version 1");
  // Cells that do not match their table.
  nlohmann::json bad = nlohmann::json::from_cbor(bytes);
  bad["frames"][1]["cells"] = nlohmann::json::binary({1, 2, 3});
  const std::vector<std::uint8_t> b = nlohmann::json::to_cbor(bad);
  CHECK_FALSE(decode_history_state(std::string(b.begin(), b.end()), back, error));
  CHECK(error == "frames[1].cells: 3 bytes for 3 switches");
  // A job pointing past its table.
  nlohmann::json job = nlohmann::json::from_cbor(bytes);
  job["frames"][1]["jobs"][0]["switches"] = {7};
  const std::vector<std::uint8_t> j = nlohmann::json::to_cbor(job);
  CHECK_FALSE(decode_history_state(std::string(j.begin(), j.end()), back, error));
  CHECK(error == "frames[1].jobs[0].switches: not a switch of its table");
}

}  // namespace ibfx
