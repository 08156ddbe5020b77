#include "jobs/squeue_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "base/child_process.h"

namespace ibfx {

JobListFetch SqueueRunner::fetch() const {
  const std::string what = config_.squeue_command + " --json";
  auto failed = [&](const std::string& why) { return JobListFetch{{}, what + ": " + why}; };
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
  ChildOutput child = read_child_output(
      pid, pipe_fds[0], {std::chrono::steady_clock::now() + config_.timeout, kMaxJobListBytes, {}});
  if (child.cut == ChildOutput::Cut::kTimeout) {
    return failed("no answer within " + format_duration(config_.timeout));
  }
  if (child.cut == ChildOutput::Cut::kTooLarge) {
    return failed("more than " + std::to_string(kMaxJobListBytes >> 20) + " MiB of output");
  }
  const int status = child.status;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return failed(describe_status(status));
  return JobListFetch{std::move(child.output), {}};
}

}  // namespace ibfx
