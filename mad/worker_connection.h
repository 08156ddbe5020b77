// The parent's end of one MAD worker (mad/mad_worker.h): the
// process and its two socketpair channels, shared by the supervisor (which
// reaps and replaces it) and the transport (which sends through it).
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>

#include "mad/mad_transport.h"
#include "mad/mad_worker.h"

namespace ibfx {

struct MadWorker::Connection {
  Connection(pid_t p, int mad, int ctl) : pid(p), mad_fd(mad), ctl_fd(ctl) {}
  ~Connection() {
    ::close(mad_fd);
    ::close(ctl_fd);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const pid_t pid;
  const int mad_fd;
  const int ctl_fd;
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::atomic<bool> dead{false};
  bool smp = false;     // set before the connection is published
  LocalPort local;      // likewise
  bool reaped = false;  // guarded by MadWorker::mu_; once true, pid may be reused
};

}  // namespace ibfx
