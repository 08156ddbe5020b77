// The history's bounds: the recent window at sweep resolution, coarse steps
// beyond it up to the coarse window, the memory budget, a clock that jumps
// back or forward, sweeps that are late, and frames restored from a file
// of another fabric.
#include "history/history_ring.h"

#include <catch2/catch.hpp>

#include "test/support/history_support.h"

namespace ibfx {
namespace {

HistorySettings small_settings() {
  HistorySettings s;
  s.recent_window_seconds = 60;
  s.coarse_window_seconds = 600;
  s.coarse_step_seconds = 30;
  return s;
}

std::vector<double> times(const HistoryRing& ring) {
  std::vector<double> out;
  const auto frames = ring.frames();  // held: the loop reads its frames
  for (const HistoryFramePtr& f : frames->frames) out.push_back(f->time);
  return out;
}

}  // namespace

TEST_CASE("the ring keeps every sweep of the recent window and folds older ones by step",
          "[history]") {
  HistoryRing ring(small_settings());
  for (int t = 1000; t <= 1100; t += 10) ring.record(test::history_frame(t, {t / 10000.0}));
  // Recent: 1040..1100 (within 60 s of 1100). Folded: 1000..1030 into the
  // steps starting 990 (1000..1010) and 1020 (1020, 1030).
  CHECK(times(ring) == std::vector<double>{990, 1020, 1040, 1050, 1060, 1070, 1080, 1090, 1100});
  const auto frames = ring.frames();
  CHECK(frames->frames[0]->span == 30);
  CHECK(frames->frames[0]->sweeps == 2);
  CHECK(ratio_value(frames->frames[0]->cells[0].stall) == Approx(0.101));  // the worst of the two
  CHECK(frames->frames[1]->sweeps == 2);
  CHECK(frames->frames[2]->span == 0);
  // The page at a time: the last frame at or before it; none before the first.
  CHECK(frames->at(1065)->time == 1060);
  CHECK(frames->at(1000)->time == 990);
  CHECK(frames->at(989) == nullptr);
  CHECK(frames->at(5000)->time == 1100);
}

TEST_CASE("coarse steps older than the coarse window are dropped", "[history]") {
  HistoryRing ring(small_settings());
  for (int t = 0; t <= 2000; t += 10) ring.record(test::history_frame(t, {0.1}));
  const auto frames = ring.frames();
  // 600 s of steps of 30 s before the last 60 s of sweeps, no more.
  CHECK(frames->frames.front()->time + frames->frames.front()->span > 2000 - 600);
  CHECK(frames->frames.size() <= 20 + 7);
}

TEST_CASE("a late sweep leaves a gap, and a clock jumping forward ages everything out",
          "[history]") {
  HistoryRing ring(small_settings());
  ring.record(test::history_frame(1000, {0.1}));
  ring.record(test::history_frame(1010, {0.1}));
  ring.record(test::history_frame(1050, {0.2}));  // 40 s late: no frame in between
  CHECK(times(ring) == std::vector<double>{1000, 1010, 1050});
  ring.record(test::history_frame(1000000, {0.3}));  // a day and more later
  CHECK(times(ring) == std::vector<double>{1000000});
}

TEST_CASE("a clock that goes back drops the frames after the new sweep", "[history]") {
  HistoryRing ring(small_settings());
  for (int t = 1000; t <= 1050; t += 10) ring.record(test::history_frame(t, {0.1}));
  const HistoryRecordOutcome o = ring.record(test::history_frame(1025, {0.4}));
  CHECK(o.dropped_future == 3);  // 1030, 1040, 1050
  CHECK(times(ring) == std::vector<double>{1000, 1010, 1020, 1025});
  // The same sweep published again replaces its frame: not a clock going back.
  const HistoryRecordOutcome again = ring.record(test::history_frame(1025, {0.5}));
  CHECK(again.dropped_future == 0);
  CHECK(times(ring) == std::vector<double>{1000, 1010, 1020, 1025});
  CHECK(ratio_value(ring.frames()->frames.back()->cells[0].stall) == Approx(0.5));
  // Far back: the coarse steps after it go too, the ring stays ordered.
  for (int t = 1030; t <= 1300; t += 10) ring.record(test::history_frame(t, {0.1}));
  const HistoryRecordOutcome far = ring.record(test::history_frame(100, {0.4}));
  CHECK(far.dropped_future > 0);
  CHECK(times(ring) == std::vector<double>{100});
}

TEST_CASE("the memory budget bounds the ring whatever the windows", "[history]") {
  HistorySettings s;
  s.recent_window_seconds = 86400;
  s.max_bytes = 200000;
  HistoryRing ring(s);
  const auto table = test::history_table(1000);
  const std::vector<double> stalls(1000, 0.1);
  for (int t = 0; t < 1000; ++t) ring.record(test::history_frame(t, stalls, table));
  CHECK(ring.bytes() <= s.max_bytes);
  CHECK(ring.size() >= 10);  // 6 kB a frame: the budget holds tens of them
  CHECK(ring.frames()->frames.back()->time == 999);
}

TEST_CASE("restored frames of the same fabric stay, of another fabric are dropped", "[history]") {
  HistoryRing same(small_settings());
  same.restore({test::history_frame(1000, {0.1, 0.2}), test::history_frame(1010, {0.1, 0.2})});
  CHECK(same.size() == 2);
  const HistoryRecordOutcome kept = same.record(test::history_frame(1020, {0.1, 0.2}));
  CHECK(kept.dropped_foreign == 0);
  CHECK(times(same) == std::vector<double>{1000, 1010, 1020});

  HistoryRing other(small_settings());
  other.restore({test::history_frame(1000, {0.1, 0.2})});
  const HistoryRecordOutcome dropped =
      other.record(test::history_frame(1020, {0.1, 0.2}, test::history_table(2, 100)));
  CHECK(dropped.dropped_foreign == 1);
  CHECK(times(other) == std::vector<double>{1020});
  // Only the first sweep after a restore is compared: a later rediscovery is
  // the fabric changing, not a foreign file.
  const HistoryRecordOutcome later =
      other.record(test::history_frame(1030, {0.1}, test::history_table(1, 500)));
  CHECK(later.dropped_foreign == 0);
}

}  // namespace ibfx
