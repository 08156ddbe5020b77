#include "discovery/discovery_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "base/child_process.h"
#include "base/log.h"
#include "discovery/stderr_tap.h"

namespace ibfx {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kResultFd = 3;

// A failed child's reason goes into a log line: keep it one short line of
// text whatever the child wrote.
std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 500;
  std::string out;
  for (const char c : text.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f ? c : ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (text.size() > kMax) out += "...";
  return out;
}

}  // namespace

// ---- child ------------------------------------------------------------------

bool is_discover_once_invocation(int argc, char** argv) {
  return argc >= 2 && std::string_view(argv[1]) == "--discover-once";
}

int run_discover_once(int argc, char** argv) {
  DiscoveryConfig config;
  const ChildFlags flags = parse_child_flags(argc, argv, [&config](std::string_view arg) {
    const auto number = [arg](std::string_view prefix) {
      return std::atoll(std::string(arg.substr(prefix.size())).c_str());
    };
    if (arg.starts_with("--max-smps=")) {
      config.max_smps = static_cast<int>(number("--max-smps="));
    } else if (arg.starts_with("--timeout-ms=")) {
      config.timeout = milliseconds(number("--timeout-ms="));
    } else if (arg.starts_with("--retries=")) {
      config.retries = static_cast<int>(number("--retries="));
    }
  });
  become_child(flags);
  // Run by hand (no result descriptor), the fabric goes to stdout.
  const int out = ::fcntl(kResultFd, F_GETFD) >= 0 ? kResultFd : STDOUT_FILENO;
  DiscoveryResult result;
  StderrCounts lost;
  {
    // The SMPs libibnetdisc lost are only lines on its stderr: count them,
    // so that the daemon knows whether this discovery is complete.
    StderrTap tap;
    try {
      result = Discovery(flags.ca, flags.ca_port, config).discover();
    } catch (const std::exception& e) {
      result.fabric = nullptr;
      result.error = e.what();
    }
    lost = tap.stop();
  }
  if (!result.fabric) {
    write_all(out, result.error.empty() ? "discovery failed" : result.error);
    return 1;
  }
  Fabric fabric = *result.fabric;
  fabric.smp_timeouts = lost.smp_timeouts;
  fabric.smp_errors = lost.smp_errors;
  return write_all(out, encode_fabric(fabric)) ? 0 : 1;
}

// ---- parent -----------------------------------------------------------------

DiscoveryProcess::DiscoveryProcess(DiscoveryProcessOptions options)
    : options_(std::move(options)) {}

DiscoveryProcess::~DiscoveryProcess() { stop(); }

pid_t DiscoveryProcess::pid() const {
  std::lock_guard lock(mu_);
  return child_;
}

void DiscoveryProcess::stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  // discover() reaps it; the pid stays valid until then.
  if (child_ > 0) ::kill(child_, SIGKILL);
}

DiscoveryResult DiscoveryProcess::discover(const DiscoveryConfig& config) {
  std::lock_guard serial(run_mu_);
  DiscoveryResult result;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      result.error = "stopping";
      return result;
    }
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  const std::vector<std::string> args = {options_.exe,
                                         "--discover-once",
                                         "--ca=" + options_.ca,
                                         "--ca-port=" + std::to_string(options_.ca_port),
                                         "--max-smps=" + std::to_string(config.max_smps),
                                         "--timeout-ms=" + std::to_string(config.timeout.count()),
                                         "--retries=" + std::to_string(config.retries),
                                         "--log.level=" + options_.log_level,
                                         "--log.format=" + options_.log_format};
  // The fabric comes back on descriptor 3 (kResultFd).
  const pid_t pid = spawn_child(args, {fds[1]}, true);
  ::close(fds[1]);
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    return result;
  }
  {
    std::lock_guard lock(mu_);
    child_ = pid;
    if (stopping_) ::kill(pid, SIGKILL);  // stop() came between the checks
  }

  const auto started = Clock::now();
  const auto deadline = started + options_.timeout;
  auto next_progress = started + options_.progress_interval;
  enum class Cut { kNo, kTimeout, kTooLarge } cut = Cut::kNo;
  std::string output;
  char buf[65536];
  for (;;) {
    if (Clock::now() > deadline) {
      cut = Cut::kTimeout;
      break;
    }
    if (options_.progress && Clock::now() >= next_progress) {
      next_progress += options_.progress_interval;
      options_.progress(std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started));
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed it, normally by exiting
    output.append(buf, static_cast<std::size_t>(n));
    if (output.size() > options_.max_output) {
      cut = Cut::kTooLarge;
      break;
    }
  }
  ::close(fds[0]);
  // A child that closed its end but does not exit is held to the same
  // deadline; one that is cut short is killed.
  int status = 0;
  for (;;) {
    if (cut != Cut::kNo) ::kill(pid, SIGKILL);
    const pid_t r = ::waitpid(pid, &status, cut != Cut::kNo ? 0 : WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;  // cannot happen for our own child; do not spin
    if (Clock::now() > deadline) {
      cut = Cut::kTimeout;
      continue;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  bool stopped = false;
  {
    std::lock_guard lock(mu_);
    child_ = -1;
    stopped = stopping_;
  }

  const std::string who = "the discovery process (pid " + std::to_string(pid) + ")";
  if (stopped) {
    result.error = "stopping";
  } else if (cut == Cut::kTimeout) {
    result.error = who + " did not finish in " + std::to_string(options_.timeout.count()) +
                   " ms and was killed";
  } else if (cut == Cut::kTooLarge) {
    result.error =
        who + " wrote more than " + std::to_string(options_.max_output) + " bytes and was killed";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    auto fabric = std::make_shared<Fabric>();
    std::string error;
    if (decode_fabric(output, *fabric, error)) {
      result.fabric = std::move(fabric);
    } else {
      result.error = who + " sent a malformed fabric: " + error;
    }
  } else if (WIFEXITED(status) && !output.empty()) {
    // Its own reason, e.g. "libibnetdisc: fabric discovery failed".
    result.error = printable(output);
  } else {
    result.error = who + " " + describe_status(status);
  }
  return result;
}

}  // namespace ibfx
