// The status page's history in the daemon (issue #35): a publish stage
// (publish_stage.h) that adds each published sweep's page to the
// HistoryRing, after the status model is built and before the page is
// rendered from it, so that the page shows the sweep it is the page of; and
// keeps the history in the state directory (history.bin, through a
// StateFile: atomic writes, at most one per history.save_interval, a corrupt
// or foreign file logged and kept aside). Readers get the immutable
// HistoryFrames each publication carries.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "config/config.h"
#include "history/history_ring.h"
#include "pipeline/publish_stage.h"
#include "pipeline/state_file.h"
#include "snapshot/snapshot.h"
#include "views/status_model.h"

namespace ibfx {

HistorySettings history_settings(const HistoryConfig& config);

class HistoryRecorder final : public PublishStage {
 public:
  explicit HistoryRecorder(const HistoryConfig& config);
  ~HistoryRecorder() override;

  // Restores what a previous run saved in `directory` and saves there from
  // now on. Call once, before the first record().
  void keep_in(const std::string& directory);

  std::string_view name() const override { return "history"; }
  // Publisher thread: records the sweep the model shows, and hands the
  // history with it to the page (the model) and to the publication (with
  // the model, for the pages rendered per request: ?window=).
  void run(PublishFrame& frame) override;

  // Adds the sweep `model` shows; returns the history with it.
  std::shared_ptr<const HistoryFrames> record(const StatusModel& model, const Snapshot& snapshot);

  // What is kept now (restored frames before the first sweep).
  std::shared_ptr<const HistoryFrames> frames() const;
  std::size_t bytes() const;

  // Writes the history as it is now and stops the writer. Idempotent.
  void stop() override;

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
