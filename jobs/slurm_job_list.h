// The running jobs of a Slurm job list: the JSON slurmrestd serves at
// GET /slurm/v0.0.38/jobs and `squeue --json` prints (Slurm 22.05; the same
// "jobs" records), read with a streaming (SAX) parser so that a list of
// 100k jobs costs the fields kept, not a DOM of every field of every job.
//
// Fields read per record (slurmrestd's v0.0.38 job_info schema): job_id
// (integer), name, user_name, partition, job_state ("RUNNING"; later API
// versions give a list of flags, whose first entry is the state), nodes (a
// hostlist expression, jobs/hostlist.h), start_time (Unix seconds;
// later versions wrap it as {"set": ..., "number": N}) and end_time (the
// same; read only for a job that ended: a running job's is its time
// limit). Every other field is skipped. A non-empty "errors" list without
// "jobs" is the server's refusal.
//
// Slurm lists an ended job for MinJobAge (300 s by default) after its end,
// in state COMPLETED, CANCELLED, FAILED, ... with its end_time: the job
// receipts (issue #44) take the end from there, not from the first poll
// that no longer lists it running.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ibfx {

struct SlurmJob {
  std::uint64_t job_id = 0;
  std::string name;
  std::string user;
  std::string partition;
  std::vector<std::string> hosts;  // the expanded `nodes`
  std::int64_t start_time = 0;     // Unix seconds; 0: not given

  friend bool operator==(const SlurmJob&, const SlurmJob&) = default;
};

// A job the list shows ended (COMPLETING, COMPLETED, CANCELLED, ...).
struct SlurmJobEnd {
  std::uint64_t job_id = 0;
  std::int64_t end_time = 0;  // Unix seconds

  friend bool operator==(const SlurmJobEnd&, const SlurmJobEnd&) = default;
};

struct JobListLimits {
  std::size_t max_jobs = 2000;         // running jobs; more is an error (jobs.max_jobs)
  std::size_t max_hosts = 1 << 20;     // hosts over all running jobs
  std::size_t max_field_bytes = 4096;  // a kept string longer than this is cut
  std::size_t max_ended = 100'000;     // ended jobs kept; more are not (their ends are polls)
};

struct JobList {
  std::vector<SlurmJob> jobs;      // running jobs with nodes, in the list's order
  std::vector<SlurmJobEnd> ended;  // ended jobs with an end_time, in the list's order
  std::size_t records = 0;         // job records read, any state
  std::size_t bad_records = 0;     // running records skipped: no job_id, bad nodes
  std::string first_bad_record;    // why the first one was skipped
  std::string error;               // empty: parsed; else why the list is unusable
  bool ok() const { return error.empty(); }
};

JobList parse_slurm_job_list(std::string_view json, const JobListLimits& limits);

}  // namespace ibfx
