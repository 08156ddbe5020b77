#include "jobs/job_source.h"

#include "base/log.h"
#include "base/thread_name.h"
#include "base/utc_time.h"
#include "config/text_file.h"
#include "jobs/squeue_runner.h"

namespace ibfx {
namespace {}  // namespace

std::string read_slurm_token(const std::string& path) {
  std::string text = read_text_file(path, std::size_t{64} * 1024);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const std::size_t last = text.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) throw ConfigError(path + ": jobs.token_file: the file is empty");
  text = text.substr(first, last - first + 1);
  for (const char c : text) {
    // A header value: a newline inside would end the header early.
    if (c < '!' || c > '~') {
      throw ConfigError(path + ": jobs.token_file: the token holds white space or control bytes");
    }
  }
  return text;
}

JobSource::Fetch JobSource::make_fetch(const JobsConfig& config, std::string token) const {
  if (config.source == "squeue") {
    return [runner = SqueueRunner(config)] { return runner.fetch(); };
  }
  return
      [client = SlurmrestdClient(config), token = std::move(token)] { return client.fetch(token); };
}

JobSource::JobSource(const JobsConfig& config) : config_(config) {
  const bool jwt = config.source == "slurmrestd" && !config.token_file.empty();
  fetch_ = make_fetch(config, jwt ? read_slurm_token(config.token_file) : std::string());
}

JobSource::JobSource(const JobsConfig& config, Fetch fetch)
    : config_(config), fetch_(std::move(fetch)), custom_fetch_(true) {}

JobSource::~JobSource() { stop(); }

void JobSource::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    set_thread_name("ibfx-jobs");
    run();
  });
}

void JobSource::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void JobSource::reload(const JobsConfig& config) {
  const bool jwt = config.source == "slurmrestd" && !config.token_file.empty();
  Fetch fetch;
  if (!custom_fetch_) fetch = make_fetch(config, jwt ? read_slurm_token(config.token_file) : "");
  std::lock_guard lock(mu_);
  config_ = config;
  if (!custom_fetch_) fetch_ = std::move(fetch);
}

JobSourceState JobSource::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

void JobSource::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    poll_once();
    lock.lock();
    wake_.wait_for(lock, config_.poll_interval, [this] { return stopping_; });
  }
}

void JobSource::poll_once(Clock::time_point now) {
  Fetch fetch;
  JobListLimits limits;
  Clock::duration grace{};
  {
    std::lock_guard lock(mu_);
    fetch = fetch_;
    limits.max_jobs = static_cast<std::size_t>(config_.max_jobs);
    grace = config_.grace_period;
  }
  // The fetch and the parse run without the lock: state() never waits for Slurm.
  const JobListFetch fetched = fetch();
  JobList list;
  if (fetched.ok()) list = parse_slurm_job_list(fetched.body, limits);
  const std::string error = !fetched.ok() ? fetched.error
                            : !list.ok()  ? "job list: " + list.error
                                          : std::string();

  std::lock_guard lock(mu_);
  ++state_.polls;
  if (error.empty()) {
    if (!state_.up && state_.failures > 0) {
      log_info("job source: the job list is back (" + std::to_string(list.jobs.size()) +
               " running jobs)");
    }
    if (list.bad_records > 0 && failure_log_.allow(now)) {
      log_warn("job source: " + std::to_string(list.bad_records) +
               " running jobs skipped; the first: " + list.first_bad_record);
    }
    state_.jobs = std::make_shared<const std::vector<SlurmJob>>(std::move(list.jobs));
    state_.ended = std::make_shared<const std::vector<SlurmJobEnd>>(std::move(list.ended));
    state_.up = true;
    state_.last_success_seconds = unix_seconds(now);
    last_success_ = now;
    last_error_.clear();
    return;
  }
  ++state_.failures;
  state_.up = false;
  log_failure(error, now);
  if (state_.jobs && now - last_success_ >= grace) {
    log_warn("job source: no good job list for " +
             format_duration(std::chrono::duration_cast<Duration>(now - last_success_)) +
             " (jobs.grace_period " + format_duration(std::chrono::duration_cast<Duration>(grace)) +
             "): the job series are dropped");
    state_.jobs.reset();
    state_.ended.reset();
  }
}

void JobSource::log_failure(const std::string& error, Clock::time_point now) {
  const bool changed = error != last_error_;
  if (!failure_log_.allow(now, changed)) {
    ++unlogged_failures_;
    return;
  }
  std::string line = "job source: " + error;
  if (unlogged_failures_ > 0) {
    line += " (" + std::to_string(unlogged_failures_) + " more failures since the last line)";
  }
  log_warn(line);
  unlogged_failures_ = 0;
  last_error_ = error;
}

}  // namespace ibfx
