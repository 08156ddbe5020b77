// The running Slurm jobs, polled on a thread of its own (ibfx-jobs) from
// slurmrestd or `squeue --json` every jobs.poll_interval. A sweep takes the
// latest state (one shared_ptr copy under a lock): a slow, failing or
// hostile Slurm never delays a sweep or a scrape. Faults (down, slow,
// 401/500, malformed JSON, too many jobs) are one rate-limited log line
// each; the last good list is kept for jobs.grace_period, then dropped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/rate_limit.h"
#include "config/config.h"
#include "jobs/slurm_job_list.h"
#include "jobs/slurmrestd_client.h"

namespace ibfx {

struct JobSourceState {
  // The jobs to join; null: none known (off, never fetched, or dropped
  // after the grace period).
  std::shared_ptr<const std::vector<SlurmJob>> jobs;
  // The jobs the same list shows ended, with Slurm's end_time (null with
  // `jobs`).
  std::shared_ptr<const std::vector<SlurmJobEnd>> ended;
  bool up = false;                  // the last poll succeeded
  double last_success_seconds = 0;  // Unix time of the last good poll; 0: never
  std::uint64_t polls = 0;
  std::uint64_t failures = 0;
};

class JobSource {
 public:
  using Fetch = std::function<JobListFetch()>;
  using Clock = std::chrono::system_clock;

  // Fetches from config.source; reads the token file (ConfigError when it
  // cannot: start-up and reload report it).
  explicit JobSource(const JobsConfig& config);
  // With another fetch (tests).
  JobSource(const JobsConfig& config, Fetch fetch);
  ~JobSource();
  JobSource(const JobSource&) = delete;
  JobSource& operator=(const JobSource&) = delete;

  void start();  // the polling thread; the first poll at once
  void stop();

  // New settings (SIGHUP): the token file is read again. The next poll
  // uses them. Throws ConfigError for an unreadable token file (the old
  // settings stay).
  void reload(const JobsConfig& config);

  JobSourceState state() const;

  // One poll now, on the caller's thread (the thread's step; tests).
  void poll_once(Clock::time_point now = Clock::now());

 private:
  void run();
  void log_failure(const std::string& error, Clock::time_point now);
  Fetch make_fetch(const JobsConfig& config, std::string token) const;

  mutable std::mutex mu_;
  JobsConfig config_;
  Fetch fetch_;
  bool custom_fetch_ = false;
  JobSourceState state_;
  Clock::time_point last_success_{};
  // Rate limit of failure lines: the first, a changed reason, then once a minute.
  std::string last_error_;
  RateLimit<Clock> failure_log_{kLogEvery};
  std::uint64_t unlogged_failures_ = 0;

  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// The JWT in `path`, without surrounding white space (ConfigError when it
// cannot be read or is empty). Never logged: messages name the file only.
std::string read_slurm_token(const std::string& path);

}  // namespace ibfx
