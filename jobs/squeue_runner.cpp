#include "jobs/squeue_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/child_process.h"

namespace ibfx {

FetchResult SqueueRunner::fetch() const {
  const std::string what = config_.squeue_command + " --json";
  auto failed = [&](const std::string& why) { return FetchResult{{}, what + ": " + why}; };
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return failed(std::strerror(errno));
  // --all: every partition, hidden ones included, like slurmrestd's list.
  const pid_t pid =
      spawn_child({config_.squeue_command, "--json", "--all"}, {}, false, pipe_fds[1]);
  ::close(pipe_fds[1]);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    return failed(std::strerror(errno));
  }
  const auto end = std::chrono::steady_clock::now() + config_.timeout;
  std::string body;
  std::string error;
  std::array<char, 65536> buf{};
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      error = "no answer within " + format_duration(config_.timeout);
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // the deadline check above ends it
    const ssize_t n = ::read(pipe_fds[0], buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (body.size() + static_cast<std::size_t>(n) > kMaxJobListBytes) {
      error = "more than " + std::to_string(kMaxJobListBytes >> 20) + " MiB of output";
      break;
    }
    body.append(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (!error.empty()) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!error.empty()) return failed(error);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return failed(describe_status(status));
  return FetchResult{std::move(body), {}};
}

}  // namespace ibfx
