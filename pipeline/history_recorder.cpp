#include "pipeline/history_recorder.h"

#include <chrono>
#include <utility>
#include <vector>

#include "base/log.h"
#include "history/history_state.h"
#include "views/history_capture.h"

namespace ibfx {
namespace {

double seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

HistorySettings history_settings(const HistoryConfig& config) {
  HistorySettings s;
  s.recent_window_seconds = seconds(config.recent_window);
  s.coarse_window_seconds = seconds(config.coarse_window);
  s.coarse_step_seconds = seconds(config.coarse_step);
  s.max_bytes = static_cast<std::size_t>(config.max_memory_mb) << 20;
  return s;
}

HistoryRecorder::HistoryRecorder(const HistoryConfig& config)
    : config_(config), ring_(history_settings(config)), frames_(ring_.frames()) {}

HistoryRecorder::~HistoryRecorder() { stop(); }

void HistoryRecorder::keep_in(const std::string& directory) {
  if (directory.empty()) return;
  file_ = std::make_unique<StateFile>(
      directory, "history.bin", "status page history",
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.save_interval), "ibfx-history");
  const std::optional<std::string> bytes = file_->read();
  if (!bytes) return;
  std::vector<HistoryFramePtr> frames;
  std::string error;
  if (!decode_history_state(*bytes, frames, error)) {
    file_->set_aside(error);
    return;
  }
  std::lock_guard lock(mu_);
  ring_.restore(std::move(frames));
  frames_ = ring_.frames();
  log_info("restored " + std::to_string(ring_.size()) + " frames of status page history from " +
           file_->path());
}

void HistoryRecorder::run(PublishFrame& frame) {
  frame.out.history = record(frame.model, frame.snapshot);
  frame.model.history = frame.out.history;
  frame.out.status_model = std::make_shared<const StatusModel>(frame.model);
}

std::shared_ptr<const HistoryFrames> HistoryRecorder::record(const StatusModel& model,
                                                             const Snapshot& snapshot) {
  std::lock_guard lock(mu_);
  const HistoryRecordOutcome outcome =
      ring_.record(make_history_frame(model, snapshot, ring_.table()));
  if (outcome.dropped_future > 0) {
    log_warn("the clock went back: " + std::to_string(outcome.dropped_future) +
             " frames of status page history after the new sweep's time were dropped");
  }
  if (outcome.dropped_foreign > 0) {
    // The file is another fabric's (or this one was rebuilt): kept aside,
    // not overwritten by the next save.
    const std::string reason =
        std::to_string(outcome.dropped_foreign) + " frames of another fabric's switches; dropped";
    if (file_) file_->set_aside(reason);
  }
  frames_ = ring_.frames();
  save_locked(model.sweep.timestamp_seconds);
  return frames_;
}

void HistoryRecorder::save_locked(double now) {
  if (!file_ || stopped_) return;
  file_->save([frames = frames_, now] { return encode_history_state(*frames, now); });
}

std::shared_ptr<const HistoryFrames> HistoryRecorder::frames() const {
  std::lock_guard lock(mu_);
  return frames_;
}

std::size_t HistoryRecorder::bytes() const {
  std::lock_guard lock(mu_);
  return ring_.bytes();
}

void HistoryRecorder::stop() {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  // save() after the last record() is already pending: stop() writes it.
  stopped_ = true;
  if (file_) file_->stop();
}

}  // namespace ibfx
