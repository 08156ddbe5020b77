// The receipts stage of the pipeline (issue #44, docs/receipts.md): each
// Slurm job's fabric receipt, built by a ReceiptTracker from every sweep
// that saw the job run, finished into the ReceiptStore when the job leaves
// the running list. On when jobs.source is not none and receipts.enabled.
// With a state directory, the store keeps receipts.jsonl and the running
// jobs' partial receipts are saved as receipts-running.json (at most once a
// minute, and at stop) and restored at start, so that a restart loses no
// job.
//
// Threads: observe(), reload() and stop() run on the sweep thread (or
// before start / after the sweeps); peek(), store() and stats() on any
// thread. The HTTP threads reach a running job's would-be receipt through
// peek(), which takes the tracker's mutex: the sweep thread holds it only
// while ReceiptTracker::observe and save run (milliseconds), so a request
// waits at most that long, and nothing is computed for running jobs unless
// someone asks (publishing every running job's peek in each snapshot would
// cost every sweep for 2,000 jobs that nobody looks at).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "config/config.h"
#include "pipeline/stage.h"
#include "pipeline/state_file.h"
#include "receipts/receipt_store.h"
#include "receipts/receipt_tracker.h"
#include "snapshot/snapshot.h"

namespace ibfx {

struct ReceiptsStageStats {
  std::size_t running = 0;           // jobs whose receipt is being built
  std::size_t stored = 0;            // finished receipts kept
  std::uint64_t write_failures = 0;  // receipts.jsonl and receipts-running.json
};

class ReceiptsStage final : public Stage {
 public:
  explicit ReceiptsStage(const Config& config);
  ~ReceiptsStage() override;

  std::string_view name() const override { return "receipts"; }
  // The frame's jobs, join, analysis, routes and links observed (observe);
  // the frame's receipts counts (view).
  void run(SweepFrame& frame) override;
  // reload() with the new settings, on the sweep thread.
  StageReload prepare_reload(const StageSettings& next) override;

  // Before start: keeps the receipts in `directory` (empty: in memory
  // only), reads the stored ones and restores the running jobs a previous
  // run saved.
  void keep_in(const std::string& directory);

  // Sweep thread, after the join and the link health: one sweep's
  // observation; finished receipts go to the store.
  void observe(const ReceiptSweepInput& in);
  // What the snapshot of this sweep shows (sweep thread).
  ReceiptsView view() const;

  // Sweep thread, between sweeps. Jobs or receipts turned off: the running
  // jobs are dropped (no receipt is invented for them); the store stays.
  void reload(const Config& config);

  // Any thread: the receipt a running job would get if it ended at `now`.
  bool peek(std::uint64_t job_id, double now, JobReceipt& out) const;
  // Any thread (ReceiptStore is thread-safe). Never null.
  std::shared_ptr<const ReceiptStore> store() const;
  ReceiptsStageStats stats() const;
  bool on() const { return on_.load(); }

  // After the sweeps: saves the running jobs and the store's pending lines.
  void stop() override;

 private:
  void save_running(double now);

  std::atomic<bool> on_{false};  // written by reload (sweep thread), read by peek
  ReceiptsConfig config_;
  mutable std::mutex mu_;  // guards tracker_ and store_ (the pointer)
  ReceiptTracker tracker_;
  std::shared_ptr<ReceiptStore> store_;
  std::unique_ptr<StateFile> running_file_;  // null: not kept
  double last_saved_ = 0;
  double last_now_ = 0;  // the last sweep observed (Unix seconds)
  bool stopped_ = false;
  std::array<std::uint64_t, kReceiptVerdictCount> finished_{};
};

}  // namespace ibfx
