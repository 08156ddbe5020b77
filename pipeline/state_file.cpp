#include "pipeline/state_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/thread_name.h"

namespace ibfx {

StateFile::StateFile(std::string directory, const std::string& file_name, std::string what,
                     std::chrono::milliseconds min_write_interval, const char* thread_name)
    : directory_(std::move(directory)),
      what_(std::move(what)),
      min_write_interval_(min_write_interval) {
  if (directory_.empty()) return;
  path_ = directory_ + "/" + file_name;
  thread_ = std::thread([this, thread_name] {
    set_thread_name(thread_name);
    run();
  });
}

StateFile::~StateFile() { stop(); }

std::optional<std::string> StateFile::read() {
  if (directory_.empty()) return std::nullopt;
  // systemd's StateDirectory= creates it for the service; by hand it may
  // not exist yet. One level only: a typo in a deep path stays visible.
  if (::mkdir(directory_.c_str(), 0750) != 0 && errno != EEXIST) {
    log_warn("state directory " + directory_ + ": " + std::strerror(errno) + ": " + what_ +
             " will not survive a restart");
    return std::nullopt;
  }
  std::string text;
  std::string error;
  bool missing = false;
  if (!read_whole_file(path_, text, error, missing)) {
    if (missing) {
      log_info("no " + what_ + " saved in " + path_ + " (first start): starting with none");
    } else {
      log_warn("cannot read the saved " + what_ + ": " + error + ": starting with none");
    }
    return std::nullopt;
  }
  return text;
}

void StateFile::set_aside(const std::string& reason) {
  const std::string aside = path_ + ".bad";
  const bool kept = std::rename(path_.c_str(), aside.c_str()) == 0;
  log_warn("the saved " + what_ + " in " + path_ + " are unusable (" + reason +
           "): starting with none" + (kept ? "; the file is kept as " + aside : ""));
}

void StateFile::save(Encode encode) {
  if (directory_.empty()) return;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    pending_.emplace(std::move(encode));
  }
  cv_.notify_one();
}

void StateFile::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t StateFile::writes() const {
  std::lock_guard lock(mu_);
  return writes_;
}

std::uint64_t StateFile::failures() const {
  std::lock_guard lock(mu_);
  return failures_;
}

void StateFile::run() {
  std::unique_lock lock(mu_);
  auto last_write = std::chrono::steady_clock::now() - min_write_interval_;
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || pending_.has_value(); });
    if (!stopping_) {
      // Coalesce: wait out the interval since the last write, taking the
      // newest state handed in meanwhile; a stop writes at once.
      cv_.wait_until(lock, last_write + min_write_interval_, [this] { return stopping_; });
    }
    if (!pending_) {
      if (stopping_) return;
      continue;
    }
    const Encode encode = std::move(*pending_);
    pending_.reset();
    lock.unlock();
    const std::string text = encode();
    std::string error;
    const bool ok = write_file_atomically(path_, text, error);
    last_write = std::chrono::steady_clock::now();
    lock.lock();
    if (ok) {
      ++writes_;
      if (!last_error_.empty()) log_info(what_ + " saved to " + path_ + " again");
      last_error_.clear();
    } else {
      ++failures_;
      // A full disk fails every write the same way: one line, not one a sweep.
      if (error != last_error_) {
        log_warn("cannot save the " + what_ + ": " + error +
                 " (the previous file is intact; retried with the next change)");
      }
      last_error_ = error;
    }
    if (stopping_ && !pending_) return;
  }
}

}  // namespace ibfx
