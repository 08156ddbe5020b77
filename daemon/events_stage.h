// The events stage of the pipeline: the congestion events followed over
// sweeps (analysis/congestion_events.h) and, with a state directory, where
// they are kept across restarts (daemon/event_state_file.h). Each sweep's
// analysis passes through it once; it is the one place events are saved,
// after a sweep that changed them and at shutdown. Sweep thread, but for
// keep_in() and restored() (before start) and stop() (after the sweeps).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/congestion_events.h"
#include "daemon/event_state_file.h"

namespace ibfx {

class EventsStage {
 public:
  // Keeps the events in `directory` (Config::state_directory; empty:
  // nowhere, said once in the log): restores what a previous run saved
  // there and saves every change.
  void keep_in(const std::string& directory);
  // What keep_in() restored (null without a state directory): what /events
  // shows until the first sweep is published.
  std::shared_ptr<const EventList> restored() const { return restored_; }

  // One sweep's analysis of `fabric` (CongestionEventTracker::observe),
  // saved if it changed the events. `now`: Unix seconds at the end of the
  // sweep's interval (its start).
  void observe(const SweepAnalysis& analysis, const Fabric& fabric,
               const std::vector<std::string>& node_names, double now,
               const std::vector<std::vector<std::uint64_t>>& root_jobs);

  std::shared_ptr<const EventList> events() const { return tracker_.events(); }
  const EventCounters& counters() const { return tracker_.counters(); }

  // Saves what the last sweep changed and stops the writer (shutdown, after
  // the sweeps). Idempotent.
  void stop();

 private:
  // The one place the events are saved: when they changed since the last
  // save, at `now` (Unix seconds).
  void save_if_changed(double now);

  CongestionEventTracker tracker_;
  std::unique_ptr<EventStateFile> state_file_;  // null: not kept
  std::uint64_t saved_version_ = 0;
  std::shared_ptr<const EventList> restored_;
};

}  // namespace ibfx
