// The daemon's history across a restart: recorded sweeps saved at stop and
// restored by the next start; a corrupt file or another fabric's kept aside
// as history.bin.bad, never stopping the daemon.
#include "pipeline/history_recorder.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "pipeline/snapshot_publisher.h"
#include "test/support/status_support.h"
#include "test/support/temp_dir.h"

namespace ibfx {
namespace {

HistoryConfig small_config() {
  HistoryConfig c;
  c.save_interval = std::chrono::seconds(10);
  return c;
}

}  // namespace

TEST_CASE("the history recorded before a stop is there after the next start", "[history]") {
  const test::TempDir tmp;
  const std::string dir = tmp.path() + "/state";
  const test::StatusFixture fx = test::status_fixture();
  StatusModel m = build_status_model(*fx.snapshot);
  {
    HistoryRecorder r(small_config());
    r.keep_in(dir);  // first start: nothing
    CHECK(r.frames()->frames.empty());
    for (int i = 0; i < 5; ++i) {
      m.sweep.timestamp_seconds = 1764720000 + 10 * i;
      const auto frames = r.record(m, *fx.snapshot);
      CHECK(frames->frames.size() == static_cast<std::size_t>(i + 1));
    }
    CHECK(r.bytes() > 0);
    r.stop();  // the pending save is written now, not after save_interval
  }
  REQUIRE(std::filesystem::exists(dir + "/history.bin"));
  HistoryRecorder again(small_config());
  again.keep_in(dir);
  const auto restored = again.frames();
  REQUIRE(restored->frames.size() == 5);
  CHECK(restored->frames.back()->time == 1764720040);
  CHECK(restored->frames.back()->roots.front().name == "leaf-r0-0");
  // The same fabric's next sweep continues it.
  m.sweep.timestamp_seconds = 1764720100;
  CHECK(again.record(m, *fx.snapshot)->frames.size() == 6);
}

TEST_CASE("a corrupt history file is kept aside and the history starts empty", "[history]") {
  const test::TempDir tmp;
  tmp.write("history.bin", "not cbor at all");
  HistoryRecorder r(small_config());
  r.keep_in(tmp.path());
  CHECK(r.frames()->frames.empty());
  CHECK(std::filesystem::exists(tmp.path() + "/history.bin.bad"));
  CHECK_FALSE(std::filesystem::exists(tmp.path() + "/history.bin"));
}

TEST_CASE("a history file of another fabric is dropped at the first sweep and kept aside",
          "[history]") {
  const test::TempDir tmp;
  const test::StatusFixture fx = test::status_fixture();
  StatusModel m = build_status_model(*fx.snapshot);
  {
    HistoryRecorder r(small_config());
    r.keep_in(tmp.path());
    m.sweep.timestamp_seconds = 1764720000;
    r.record(m, *fx.snapshot);
    r.stop();
  }
  // The next start finds a fabric whose switches all have other GUIDs.
  for (StatusSwitch& s : m.switches) s.guid += 0x1000000;
  HistoryRecorder r(small_config());
  r.keep_in(tmp.path());
  REQUIRE(r.frames()->frames.size() == 1);
  m.sweep.timestamp_seconds = 1764720100;
  const auto frames = r.record(m, *fx.snapshot);
  REQUIRE(frames->frames.size() == 1);
  CHECK(frames->frames[0]->time == 1764720100);
  CHECK(std::filesystem::exists(tmp.path() + "/history.bin.bad"));
}

TEST_CASE(
    "the history recorder is the publisher's stage: each page shows the history with its sweep",
    "[history]") {
  const test::StatusFixture fx = test::status_fixture();
  HistoryRecorder recorder(small_config());
  PublicationStore store;
  SnapshotPublisher publisher(store,
                              SnapshotPublisher::render_exposition_for("/metrics", {&recorder}));
  publisher.submit(fx.snapshot);
  const auto pub = store.current();
  REQUIRE(pub != nullptr);
  REQUIRE(pub->history != nullptr);
  REQUIRE(pub->history->frames.size() == 1);
  CHECK(pub->history->frames.back()->time == fx.snapshot->sweep_timestamp_seconds);
  // The roots kept are the page's rows as the page listed them.
  REQUIRE(pub->status_model != nullptr);
  REQUIRE_FALSE(pub->status_model->roots.empty());
  CHECK(pub->history->frames.back()->roots.front().name == pub->status_model->roots.front().name);
  CHECK(pub->status_model->history == pub->history);
  CHECK(recorder.frames() == pub->history);
}

}  // namespace ibfx
