#include "daemon/events_stage.h"

#include "base/log.h"
#include "base/utc_time.h"

namespace ibfx {

void EventsStage::keep_in(const std::string& directory) {
  if (directory.empty()) {
    log_info("state_directory is empty: congestion events will not survive a restart");
    return;
  }
  state_file_ = std::make_unique<EventStateFile>(directory);
  if (auto state = state_file_->load()) {
    tracker_.restore(std::move(*state), unix_seconds_now());
    saved_version_ = tracker_.version();
  }
  restored_ = tracker_.events();
}

void EventsStage::observe(const SweepAnalysis& analysis, const Fabric& fabric,
                          const std::vector<std::string>& node_names, double now,
                          const std::vector<std::vector<std::uint64_t>>& root_jobs) {
  tracker_.observe(analysis, fabric, node_names, now, root_jobs);
  save_if_changed(now);
}

void EventsStage::stop() {
  if (!state_file_) return;
  // The last sweep's events, written before the process exits.
  save_if_changed(unix_seconds_now());
  state_file_->stop();
}

void EventsStage::save_if_changed(double now) {
  if (!state_file_ || tracker_.version() == saved_version_) return;
  saved_version_ = tracker_.version();
  state_file_->save(tracker_.state(), now);
}

}  // namespace ibfx
