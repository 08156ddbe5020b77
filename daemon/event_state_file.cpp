#include "daemon/event_state_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "analysis/congestion_event_state.h"
#include "base/atomic_file.h"
#include "base/log.h"
#include "base/thread_name.h"

namespace ibfx {

EventStateFile::EventStateFile(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty()) return;
  path_ = directory_ + "/events.json";
  thread_ = std::thread([this] {
    set_thread_name("ibfx-state");
    run();
  });
}

EventStateFile::~EventStateFile() { stop(); }

std::optional<EventTrackerState> EventStateFile::load() {
  if (directory_.empty()) return std::nullopt;
  // systemd's StateDirectory= creates it for the service; by hand it may
  // not exist yet. One level only: a typo in a deep path stays visible.
  if (::mkdir(directory_.c_str(), 0750) != 0 && errno != EEXIST) {
    log_warn("state directory " + directory_ + ": " + std::strerror(errno) +
             ": congestion events will not survive a restart");
    return std::nullopt;
  }
  std::string text;
  std::string error;
  bool missing = false;
  if (!read_whole_file(path_, text, error, missing)) {
    if (missing) {
      log_info("no congestion events saved in " + path_ + " (first start): starting with none");
    } else {
      log_warn("cannot read the saved congestion events: " + error + ": starting with none");
    }
    return std::nullopt;
  }
  EventTrackerState state;
  if (!decode_event_state(text, state, error)) {
    const std::string aside = path_ + ".bad";
    const bool kept = std::rename(path_.c_str(), aside.c_str()) == 0;
    log_warn("the saved congestion events in " + path_ + " are unusable (" + error +
             "): starting with none" + (kept ? "; the file is kept as " + aside : ""));
    return std::nullopt;
  }
  log_info("restored " + std::to_string(state.events.size()) + " congestion events from " + path_);
  return state;
}

void EventStateFile::save(EventTrackerState state, double saved_at) {
  if (directory_.empty()) return;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    pending_.emplace(std::move(state), saved_at);
  }
  cv_.notify_one();
}

void EventStateFile::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t EventStateFile::writes() const {
  std::lock_guard lock(mu_);
  return writes_;
}

std::uint64_t EventStateFile::failures() const {
  std::lock_guard lock(mu_);
  return failures_;
}

void EventStateFile::run() {
  std::unique_lock lock(mu_);
  auto last_write = std::chrono::steady_clock::now() - kMinWriteInterval;
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || pending_.has_value(); });
    if (!stopping_) {
      // Coalesce: wait out the interval since the last write, taking the
      // newest state handed in meanwhile; a stop writes at once.
      cv_.wait_until(lock, last_write + kMinWriteInterval, [this] { return stopping_; });
    }
    if (!pending_) {
      if (stopping_) return;
      continue;
    }
    const auto [state, saved_at] = std::move(*pending_);
    pending_.reset();
    lock.unlock();
    const std::string text = encode_event_state(state, saved_at);
    std::string error;
    const bool ok = write_file_atomically(path_, text, error);
    last_write = std::chrono::steady_clock::now();
    lock.lock();
    if (ok) {
      ++writes_;
      if (!last_error_.empty()) log_info("congestion events saved to " + path_ + " again");
      last_error_.clear();
    } else {
      ++failures_;
      // A full disk fails every write the same way: one line, not one a sweep.
      if (error != last_error_) {
        log_warn("cannot save the congestion events: " + error +
                 " (the previous file is intact; retried with the next change)");
      }
      last_error_ = error;
    }
    if (stopping_ && !pending_) return;
  }
}

}  // namespace ibfx
