// `squeue --json` for sites without slurmrestd: the same job records
// (jobs/slurm_job_list.h). The child is spawned like the daemon's
// other helpers (base/child_process.h: descriptors closed, killed with
// the daemon), its stdout read up to kMaxJobListBytes, and it is killed
// when it outlives the time-out.
#pragma once

#include "config/config.h"
#include "jobs/slurmrestd_client.h"

namespace ibfx {

class SqueueRunner {
 public:
  explicit SqueueRunner(const JobsConfig& config) : config_(config) {}
  JobListFetch fetch() const;

 private:
  JobsConfig config_;
};

}  // namespace ibfx
