// Discovery in a short-lived child process: this executable re-executed with
// --discover-once, which runs Discovery::discover() once, writes the encoded
// Fabric to its result descriptor and exits.
//
// Why not in the MAD worker: libibnetdisc registers and unregisters a
// Subnet Management (class 0x01) agent on every discovery, while the worker
// keeps one registered for the sweep's LID check. Under umad2sim a process
// has one agent slot per class, so the two cannot share a process (the
// simulator's receiver thread crashed when they did). A process per
// discovery also means a libibnetdisc that leaks or wedges costs that
// process, not the worker, and discovery still runs next to the sweep.
//
//   parent (DiscoveryProcess::discover)      child (--discover-once)
//   pipe read end  <---- result fd 3 ----    Discovery::discover()
//                                            exit 0: fd 3 holds the Fabric
//                                            exit 1: fd 3 holds the reason
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "config/config.h"
#include "discovery/discovery.h"

namespace ibfx {

// ---- child side ---------------------------------------------------------
// True when argv asks for one discovery (argv[1] == "--discover-once").
bool is_discover_once_invocation(int argc, char** argv);
// The child's main(); returns its exit status. Must return (not _exit):
// umad2sim disconnects from the simulator in an atexit handler.
int run_discover_once(int argc, char** argv);

// ---- parent side --------------------------------------------------------
struct DiscoveryProcessOptions {
  std::string exe = "/proc/self/exe";
  std::string ca;  // as the MAD worker resolved it
  int ca_port = 0;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  // Bound on one discovery; a child that exceeds it is presumed wedged,
  // killed and reaped.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // Bound on what a child may write: a fabric of 100k ports is a few MB.
  std::size_t max_output = std::size_t{1} << 30;
  // Called from discover() every progress_interval while a discovery runs
  // (libibnetdisc reports nothing until it is done), with the time so far:
  // a large fabric takes seconds to minutes and the operator should see it
  // is still going.
  std::function<void(std::chrono::seconds)> progress;
  std::chrono::milliseconds progress_interval{std::chrono::seconds(10)};
};

class DiscoveryProcess {
 public:
  explicit DiscoveryProcess(DiscoveryProcessOptions options);
  ~DiscoveryProcess();
  DiscoveryProcess(const DiscoveryProcess&) = delete;
  DiscoveryProcess& operator=(const DiscoveryProcess&) = delete;

  // Runs one discovery in a child (blocking, one at a time). Never throws:
  // every failure is a DiscoveryResult with a null fabric and a reason.
  DiscoveryResult discover(const DiscoveryConfig& config);
  // Kills a discovery in progress and fails later ones at once, so that
  // shutdown does not wait for a fabric nobody will use. Idempotent.
  void stop();

  pid_t pid() const;  // the running child, -1 when there is none

 private:
  DiscoveryProcessOptions options_;
  std::mutex run_mu_;  // one child at a time
  mutable std::mutex mu_;
  pid_t child_ = -1;
  bool stopping_ = false;
};

}  // namespace ibfx
