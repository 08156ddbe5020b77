// The jobs stage of the pipeline (jobs.source, issue #28): the job source
// polling Slurm on its own thread (ibfx-jobs), and the join of its latest
// list to each sweep's analysis, on the sweep thread. Off (jobs.source:
// none), each sweep's JobsView is empty. Reloads come in two steps, so that
// a bad file keeps the running settings, all of them: prepare_reload()
// reads and checks everything that can fail, apply() swaps on the sweep
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "analysis/sweep_analyzer.h"
#include "base/rate_limit.h"
#include "config/config.h"
#include "fabric/fabric.h"
#include "jobs/job_join.h"
#include "jobs/job_source.h"
#include "pipeline/stage.h"
#include "routing/route_tracker.h"
#include "snapshot/snapshot.h"

namespace ibfx {

class JobsStage final : public Stage {
 public:
  // Throws ConfigError for an unreadable token or host map file, a bad
  // host_regex (start-up, before anything runs).
  explicit JobsStage(const JobsConfig& config);
  ~JobsStage() override;

  std::string_view name() const override { return "jobs"; }
  void start() override;  // the source's polling thread, when on
  void stop() override;
  // The frame's jobs: join() of the frame's fabric and analysis.
  void run(SweepFrame& frame) override;
  // The jobs settings read and checked (prepare_reload below); applied on
  // the sweep thread (apply); a source turned off is stopped by `finish`,
  // off the sweep thread.
  StageReload prepare_reload(const StageSettings& next) override;

  // What a reload changes, read and checked (prepare_reload), not applied.
  class Reload {
    friend class JobsStage;
    bool on_ = false;
    std::optional<JobJoinConfig> join_config_;  // empty: the join stays
    std::optional<JobJoin> join_;
    std::unique_ptr<JobSource> source_;  // a source to start (jobs turned on)
  };
  // Reads the token file (again), the host map file and compiles
  // host_regex: throws ConfigError, and nothing is applied. A running
  // source takes the new settings for its next poll.
  Reload prepare_reload(const JobsConfig& config);
  // Sweep thread. `running`: the pipeline runs, so a new source starts
  // polling. Returns a source to stop off the sweep thread (its last poll
  // may take jobs.timeout), or null. Unchanged join settings keep the join,
  // and with it each job's stall sum.
  std::unique_ptr<JobSource> apply(Reload reload, bool running);

  // Sweep thread: the source's latest list (one copy under its lock: a
  // slow or failing Slurm never holds the sweep) joined to the sweep's
  // `analysis` of `fabric`. Logs, once a minute at most, the Slurm hosts
  // that match no HCA.
  JobsView join(const std::shared_ptr<const Fabric>& fabric, const SweepAnalysis& analysis);

  // The Slurm job ids in each root's tree, parallel to the forest's roots
  // of `analysis` (what each congestion event records of the jobs its tree
  // hurt); empty when jobs are off.
  // The top senders behind each root (RouteSweep::senders) as the events
  // keep them, with the Slurm jobs on each sender's port; parallel to the
  // forest's roots (empty without routes).
  static std::vector<std::vector<EventSender>> root_senders(
      const RouteSweep& routes, const JobsView& jobs, const SweepAnalysis& analysis,
      const Fabric& fabric, const std::vector<std::string>& node_names);
  static std::vector<std::vector<std::uint64_t>> root_job_ids(const JobsView& jobs,
                                                              const SweepAnalysis& analysis);

 private:
  std::unique_ptr<JobSource> source_;
  std::optional<JobJoin> join_;
  JobJoinConfig join_config_;  // what join_ was built with
  RateLimit<> unmatched_hosts_log_{kLogEvery};
};

}  // namespace ibfx
