#include "base/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <thread>

#include "base/log.h"

namespace ibfx {

pid_t spawn_child(const std::vector<std::string>& args, const std::vector<int>& fds,
                  bool stdout_to_stderr, int stdout_fd) {
  // Everything the child needs is built before fork(): other threads may hold
  // malloc's locks, so the child only makes async-signal-safe calls.
  constexpr std::size_t kMaxFds = 8;
  if (args.empty() || fds.size() >= kMaxFds) {
    errno = EINVAL;
    return -1;
  }
  std::vector<std::string> copies = args;
  std::vector<char*> argv;
  argv.reserve(copies.size() + 1);
  for (auto& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::array<int, kMaxFds> from{};
  for (std::size_t i = 0; i < fds.size(); ++i) from[i] = fds[i];
  const int count = static_cast<int>(fds.size());
  // stdout_fd travels with the others (moved out of the way, then to 1).
  const bool own_stdout = stdout_fd >= 0;
  if (own_stdout) from[fds.size()] = stdout_fd;
  const int moved = count + (own_stdout ? 1 : 0);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  // Move every descriptor out of the way first: a source that is itself 3 or
  // 4 would otherwise be overwritten by an earlier dup2.
  for (int i = 0; i < moved; ++i) {
    from[static_cast<std::size_t>(i)] =
        ::fcntl(from[static_cast<std::size_t>(i)], F_DUPFD, 10 + moved);
    if (from[static_cast<std::size_t>(i)] < 0) ::_exit(127);
  }
  for (int i = 0; i < count; ++i) {
    if (::dup2(from[static_cast<std::size_t>(i)], 3 + i) < 0) ::_exit(127);
  }
  if (own_stdout) {
    if (::dup2(from[static_cast<std::size_t>(count)], STDOUT_FILENO) < 0) ::_exit(127);
  } else if (stdout_to_stderr) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ::close_range(static_cast<unsigned>(3 + count), ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

ChildOutput read_child_output(pid_t pid, int fd, const ChildOutputLimits& limits) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kQuiet = std::chrono::milliseconds(100);
  ChildOutput out;
  std::array<char, 65536> buf{};
  for (;;) {
    const auto now = Clock::now();
    if (now > limits.deadline) {
      out.cut = ChildOutput::Cut::kTimeout;
      break;
    }
    if (limits.waiting) limits.waiting();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(limits.deadline - now);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min(left, kQuiet).count()) + 1) <= 0) continue;
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed it, normally by exiting
    out.output.append(buf.data(), static_cast<std::size_t>(n));
    if (out.output.size() > limits.max_bytes) {
      out.cut = ChildOutput::Cut::kTooLarge;
      break;
    }
  }
  ::close(fd);
  for (;;) {
    if (out.cut != ChildOutput::Cut::kNo) ::kill(pid, SIGKILL);
    const pid_t r = ::waitpid(pid, &out.status, out.cut != ChildOutput::Cut::kNo ? 0 : WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;  // cannot happen for our own child; do not spin
    if (Clock::now() > limits.deadline) {
      out.cut = ChildOutput::Cut::kTimeout;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return out;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

ChildFlags parse_child_flags(int argc, char** argv,
                             const std::function<void(std::string_view)>& other) {
  ChildFlags flags;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.starts_with("--ca=")) {
      flags.ca = arg.substr(5);
    } else if (arg.starts_with("--ca-port=")) {
      flags.ca_port = std::atoi(argv[i] + 10);
    } else if (arg.starts_with("--log.level=")) {
      flags.log_level = arg.substr(12);
    } else if (arg.starts_with("--log.format=")) {
      flags.log_format = arg.substr(13);
    } else if (other) {
      other(arg);
    }
  }
  return flags;
}

std::vector<std::string> child_args(const std::string& exe, std::string_view mode,
                                    const ChildFlags& flags,
                                    const std::vector<std::string>& mode_flags) {
  std::vector<std::string> args = {exe, std::string(mode), "--ca=" + flags.ca,
                                   "--ca-port=" + std::to_string(flags.ca_port)};
  args.insert(args.end(), mode_flags.begin(), mode_flags.end());
  args.push_back("--log.level=" + flags.log_level);
  args.push_back("--log.format=" + flags.log_format);
  return args;
}

void become_child(const ChildFlags& flags) {
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  try {
    set_log_level(parse_log_level(flags.log_level));
    set_log_format(parse_log_format(flags.log_format));
  } catch (const std::exception&) {
    // The parent validated both; keep the defaults if it did not.
  }
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace ibfx
