#include "discovery/discovery_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/child_process.h"
#include "base/log.h"
#include "base/log_text.h"
#include "discovery/fabric_codec.h"
#include "discovery/stderr_tap.h"

namespace ibfx {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kResultFd = 3;

// A failed child's reason goes into a log line: one line of escaped text
// (base/log_text.h) whatever the child wrote, without its final newline.
std::string reason_of(std::string_view output) {
  constexpr std::size_t kMaxShown = 500;
  while (!output.empty() && std::isspace(static_cast<unsigned char>(output.back()))) {
    output.remove_suffix(1);
  }
  return printable(output, kMaxShown);
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
  const std::vector<std::string> args =
      child_args(options_.exe, "--discover-once",
                 {options_.ca, options_.ca_port, options_.log_level, options_.log_format},
                 {"--max-smps=" + std::to_string(config.max_smps),
                  "--timeout-ms=" + std::to_string(config.timeout.count()),
                  "--retries=" + std::to_string(config.retries)});
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
  auto next_progress = started + options_.progress_interval;
  ChildOutputLimits limits{started + options_.timeout, options_.max_output, {}};
  if (options_.progress) {
    limits.waiting = [&] {
      if (Clock::now() < next_progress) return;
      next_progress += options_.progress_interval;
      options_.progress(std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started));
    };
  }
  // The fabric, or the child's reason, arrives on the pipe.
  const ChildOutput child = read_child_output(pid, fds[0], limits);
  const std::string& output = child.output;
  const int status = child.status;
  bool stopped = false;
  {
    std::lock_guard lock(mu_);
    child_ = -1;
    stopped = stopping_;
  }

  const std::string who = "the discovery process (pid " + std::to_string(pid) + ")";
  if (stopped) {
    result.error = "stopping";
  } else if (child.cut == ChildOutput::Cut::kTimeout) {
    result.error = who + " did not finish in " + std::to_string(options_.timeout.count()) +
                   " ms and was killed";
  } else if (child.cut == ChildOutput::Cut::kTooLarge) {
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
    result.error = reason_of(output);
  } else {
    result.error = who + " " + describe_status(status);
  }
  return result;
}

}  // namespace ibfx
