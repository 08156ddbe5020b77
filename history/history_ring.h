// The status page's memory (issue #35): one frame per sweep for the recent
// window, one per coarse step (the worst of its sweeps) beyond it, up to the
// coarse window; oldest first out. Owned by the exporter and fed on the
// publisher's thread (one frame per published sweep: the history never
// slows a sweep); readers get an immutable HistoryFrames.
//
// Bounds: the windows, and a memory budget that wins over them (the oldest
// coarse frames go first, then recent frames are folded early), so that a
// sweep interval of one second or a fabric twice the size the windows were
// chosen for cannot grow the daemon without limit.
//
// Time is the sweeps' wall clock. A frame not later than the newest one
// means the clock went back (NTP stepped it, or an operator): the frames
// "in the future" are dropped, since nothing later can be placed among them
// and the newest sweep is the best guess of the real time. A clock jumping
// forward, or sweeps that are late, leave a gap of no frames.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "history/history_frame.h"

namespace ibfx {

struct HistorySettings {
  double recent_window_seconds = 3600;  // every sweep
  double coarse_window_seconds = 86400;
  double coarse_step_seconds = 60;
  std::size_t max_bytes = std::size_t{64} << 20;
};

// What record() did besides adding the frame, for the caller's log line.
struct HistoryRecordOutcome {
  std::size_t dropped_future = 0;  // frames after the new one: the clock went back
  // Frames restored from the state directory, dropped because their switches
  // are not this fabric's (a file from another fabric, or a rebuilt one).
  std::size_t dropped_foreign = 0;
};

class HistoryRing {
 public:
  explicit HistoryRing(HistorySettings settings = {});

  HistoryRecordOutcome record(HistoryFramePtr frame);

  // Frames saved by a previous run (ascending time; sweep frames have span
  // 0, coarse ones their step). Checked against the first frame recorded
  // after: fewer than half of the switches in common means another fabric.
  void restore(std::vector<HistoryFramePtr> frames);

  // Everything kept, coarse then recent, ascending time.
  std::shared_ptr<const HistoryFrames> frames() const;
  // The newest switch table (null when empty): make_history_frame()'s `previous`.
  std::shared_ptr<const HistorySwitchTable> table() const;
  std::size_t bytes() const { return bytes_; }
  std::size_t size() const { return coarse_.size() + recent_.size(); }
  const HistorySettings& settings() const { return settings_; }

 private:
  void fold_oldest_recent();
  void pop_oldest_coarse();
  void enforce_bounds(double now);
  std::size_t drop_after(double time);

  HistorySettings settings_;
  std::deque<HistoryFramePtr> coarse_;
  std::deque<HistoryFramePtr> recent_;
  std::size_t bytes_ = 0;
  std::size_t table_bytes_ = 0;
  bool check_restored_ = false;
};

}  // namespace ibfx
