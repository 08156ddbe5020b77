// Builds each Slurm job's receipt (job_receipt.h) from the sweeps that saw
// it run: per sweep, its HCA ports' stall and bytes, the stall split by the
// senders of the trees they stalled in, the link conditions on them; when
// the job leaves the running list, the finished receipt with its verdict.
// Pure computation on the sweep thread; the running jobs' partial receipts
// can be saved and restored (a daemon restart loses no job: the receipt
// says which part it missed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/sweep_analyzer.h"
#include "config/config.h"
#include "fabric/fabric.h"
#include "jobs/job_join.h"
#include "jobs/slurm_job_list.h"
#include "links/link_report.h"
#include "receipts/job_receipt.h"
#include "routing/route_tracker.h"

namespace ibfx {

// What one sweep hands the tracker; every pointer may be null (not known).
struct ReceiptSweepInput {
  double now = 0;  // Unix seconds the sweep started (the interval ends there)
  // The job source: the list joined this sweep, and when it was polled
  // (JobSourceState::last_success_seconds). A list older than this sweep
  // (the source down, its grace period running) is still joined, but no job
  // is taken as ended until a newer poll leaves it out. Null list: none
  // known (source off, or the grace period over).
  std::shared_ptr<const std::vector<SlurmJob>> jobs;
  // The jobs the same list shows ended, with Slurm's end_time: a job that
  // leaves the running list ended then, not at the poll (null: none).
  std::shared_ptr<const std::vector<SlurmJobEnd>> ended;
  double jobs_polled_at = 0;
  bool source_up = false;
  const JobJoinResult* join = nullptr;  // parallel to *jobs
  const Fabric* fabric = nullptr;
  const std::vector<std::string>* node_names = nullptr;
  const SweepAnalysis* analysis = nullptr;
  const RouteSweep* routes = nullptr;
  const LinkHealthReport* links = nullptr;
};

struct ReceiptTrackerStats {
  std::size_t running = 0;       // jobs with a receipt being built
  std::size_t memory_bytes = 0;  // what the tracker holds, about
};

// One sweep's analysis indexed for every job (receipt_tracker.cpp).
struct ReceiptSweepIndex;

class ReceiptTracker {
 public:
  explicit ReceiptTracker(ReceiptsConfig config = {});
  ~ReceiptTracker();
  ReceiptTracker(ReceiptTracker&&) noexcept;
  ReceiptTracker& operator=(ReceiptTracker&&) noexcept;
  ReceiptTracker(const ReceiptTracker&) = delete;
  ReceiptTracker& operator=(const ReceiptTracker&) = delete;

  // Sweep thread, once per sweep after the jobs' join and the link health.
  // Returns the receipts finished by this sweep (jobs a newer poll no
  // longer lists; with the source gone for receipts.unknown_end_after, the
  // jobs it last listed, end_known false).
  std::vector<JobReceipt> observe(const ReceiptSweepInput& in);

  // The receipt a running job would get if it ended now (/jobs/<id> of a
  // running job); false when the job is not tracked.
  bool peek(std::uint64_t job_id, double now, JobReceipt& out) const;

  // The running jobs' partial receipts, to save (receipt_json.h) and to
  // restore after a restart: the gap between `saved_at` and the first
  // sweep after the restart is counted as missed.
  std::string save(double now) const;
  // False (and nothing restored) for text this version cannot read; `error` says why.
  bool restore(const std::string& text, std::string& error);

  void reload(const ReceiptsConfig& config);
  ReceiptTrackerStats stats() const;

 private:
  struct Running;  // per job: its receipt so far, its ports, its minutes
  // observe's steps. No list, or a stale one, past unknown_end_after: every
  // job ends at its last sweep, its end unknown.
  void end_all_unlisted(double now, double limit, std::vector<JobReceipt>& finished);
  // Jobs the list left out end when it was polled.
  void end_left_out(const ReceiptSweepInput& in, std::vector<JobReceipt>& finished);
  // The listed jobs: each one's interval added, new ones started.
  void follow_listed(const ReceiptSweepInput& in);
  Running* start_running(const SlurmJob& job, double now);
  // Adds one sweep's interval of job `job` (index into in.join->jobs).
  void accumulate(Running& run, const ReceiptSweepInput& in, const ReceiptSweepIndex& x,
                  std::size_t job, double dt, double minute, const RouteModel* model,
                  std::size_t& pair_budget);

  ReceiptsConfig config_;
  std::vector<std::unique_ptr<Running>> running_;
  // jobs_polled_at of the newest list seen; after a restore, at least the
  // first sweep's time (a restart is no job source outage).
  double last_polled_ = 0;
  bool restored_ = false;  // restore() ran, no sweep observed since
  // The route model the jobs' cross-spine fractions are of: a generation
  // that changes with it, so that each job traces its pairs once per model.
  const RouteModel* model_seen_ = nullptr;
  std::uint64_t model_generation_ = 0;
};

// The verdict and its line for a receipt whose numbers are complete
// (ReceiptTracker calls it when a job ends; tests call it alone).
void judge_receipt(JobReceipt& receipt, const ReceiptsConfig& config);

}  // namespace ibfx
