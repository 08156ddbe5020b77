#include "discovery/stderr_tap.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/child_process.h"

namespace ibfx {

StderrTap::StderrTap(std::size_t pass_on) : pass_on_(pass_on) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  std::fflush(stderr);
  const int saved = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved < 0 || ::dup2(fds[1], STDERR_FILENO) < 0) {
    if (saved >= 0) ::close(saved);
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  ::close(fds[1]);  // descriptor 2 is now the only write end
  saved_fd_ = saved;
  read_fd_ = fds[0];
  reader_ = std::thread([this] { read_loop(); });
}

StderrTap::~StderrTap() { stop(); }

void StderrTap::classify(const std::string& line, StderrCounts& counts) {
  ++counts.lines;
  // umad_status() of the request: an errno value (IBA says nothing here;
  // libibumad reports the kernel's ETIMEDOUT for an unanswered MAD).
  static const std::string kTimeout = "bad status " + std::to_string(ETIMEDOUT) + ";";
  if (line.find(kTimeout) != std::string::npos) {
    ++counts.smp_timeouts;
  } else if (line.find("bad status") != std::string::npos) {
    ++counts.smp_errors;
  }
}

void StderrTap::read_loop() {
  std::string pending;
  char buf[4096];
  auto take = [this](const std::string& line) {
    classify(line, counts_);
    if (counts_.lines <= pass_on_) {
      write_all(saved_fd_, line + "\n");
    } else {
      ++counts_.suppressed;
    }
  };
  for (;;) {
    const ssize_t n = ::read(read_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      take(pending.substr(start, nl - start));
    }
    pending.erase(0, start);
  }
  if (!pending.empty()) take(pending);
}

StderrCounts StderrTap::stop() {
  if (saved_fd_ < 0) return counts_;
  std::fflush(stderr);
  // Closes the pipe's last write end: the reader sees EOF once it has
  // drained what was written.
  ::dup2(saved_fd_, STDERR_FILENO);
  if (reader_.joinable()) reader_.join();
  ::close(read_fd_);
  ::close(saved_fd_);
  read_fd_ = -1;
  saved_fd_ = -1;
  if (counts_.suppressed > 0) {
    std::fprintf(stderr, "(%u more lines from the discovery library not shown)\n",
                 counts_.suppressed);
  }
  return counts_;
}

}  // namespace ibfx
