// The status page's history in the daemon (issue #35): the HistoryRing, fed
// one frame per published sweep on the publisher's thread (after the status
// model is built, before the page is rendered, so the page shows the sweep
// it is the page of), and kept in the state directory (history.bin,
// through a StateFile: atomic writes, at most one per
// history.save_interval, a corrupt or foreign file logged and kept aside).
// Readers get the immutable HistoryFrames each publication carries.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "config/config.h"
#include "history/history_ring.h"
#include "pipeline/state_file.h"
#include "snapshot/snapshot.h"
#include "views/status_model.h"

namespace ibfx {

HistorySettings history_settings(const HistoryConfig& config);

class HistoryRecorder {
 public:
  explicit HistoryRecorder(const HistoryConfig& config);
  ~HistoryRecorder();
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  // Restores what a previous run saved in `directory` and saves there from
  // now on. Call once, before the first record().
  void keep_in(const std::string& directory);

  // Publisher thread: adds the sweep `model` shows; returns the history
  // with it.
  std::shared_ptr<const HistoryFrames> record(const StatusModel& model, const Snapshot& snapshot);

  // What is kept now (restored frames before the first sweep).
  std::shared_ptr<const HistoryFrames> frames() const;
  std::size_t bytes() const;

  // Writes the history as it is now and stops the writer. Idempotent.
  void stop();

 private:
  void save_locked(double now);

  HistoryConfig config_;
  mutable std::mutex mu_;
  HistoryRing ring_;
  std::shared_ptr<const HistoryFrames> frames_;
  std::unique_ptr<StateFile> file_;
  bool stopped_ = false;
};

}  // namespace ibfx
