// SimFabric: a private simulated InfiniBand fabric (ibsim + opensm) for
// integration tests and benchmarks.
//
//   ibfx::test::SimFabric fabric(ibfx::test::FatTreeSpec{.servers = 4, .rails = 2, .radix = 8});
//   fabric.perf_set("leaf-r0-01", 5, "PortXmitWait", 1000);
//   auto r = fabric.run({"perfquery", std::to_string(fabric.lid_of("leaf-r0-01")), "5"});
//   auto& daemon = fabric.spawn({IBFX_DAEMON_PATH, "--config", path});
//
// Every instance has its own temp dir and IBSIM_SOCKNAME, so instances (and
// test processes) run in parallel without seeing each other. Clients (opensm,
// perfquery, the daemon) reach the simulator through libumad2sim, preloaded
// into them; they all attach at the first node of the net file.
//
// Teardown is unconditional: the destructor (also run when a Catch2 REQUIRE
// unwinds), an atexit hook (std::exit with a live instance) and, for a crash
// or SIGKILL of the test, PR_SET_PDEATHSIG on every child make sure no ibsim,
// opensm or spawned client outlives the test process.
//
// The simulator and the SM must outlive every test: a client that crashes
// opensm (as a PMA request to the SM's port once did, docs/safety.md) has
// broken the fabric for whatever runs next. So teardown checks that ibsim
// and opensm are still running, unless the test stopped them itself
// (kill_simulator(), restart_simulator(), restart_opensm()) or said it made
// them exit (acknowledge_exits()), and hands what it found to the reporter
// (set_exit_reporter(); the integration tests' main fails the test case).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "test/sim/fabric_gen.h"

namespace ibfx::test {

using EnvMap = std::map<std::string, std::string>;

inline constexpr const char* kUmad2SimPath = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

struct RunResult {
  int exit_code = -1;  // exit status, 128 + signal if killed, -1 if it timed out
  bool timed_out = false;
  std::string out;
  std::string err;

  bool ok() const { return exit_code == 0; }
};

// A child process with stdout/stderr going to files. Movable; the destructor
// terminates it if it is still running.
class Process {
 public:
  struct Spec {
    std::vector<std::string> argv;  // argv[0] is looked up in PATH, /usr/sbin and /sbin
    EnvMap env;                     // the complete environment
    std::string cwd = ".";
    std::string stdin_path = "/dev/null";
    std::string stdout_path = "/dev/null";
    std::string stderr_path = "/dev/null";
  };

  Process() = default;
  // Throws std::runtime_error if the program cannot be started.
  static Process start(const Spec& spec);
  // Runs `spec` to completion: waits up to `timeout`, then terminates it
  // (SIGKILL after `grace`) and says it timed out; returns its output and
  // removes the files spec.stdout_path and spec.stderr_path it went to.
  static RunResult run(const Spec& spec, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds grace = std::chrono::milliseconds(1000));

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  // False once the process has exited (and then it is reaped).
  bool running();
  // The exit code (see RunResult::exit_code) once it has exited.
  std::optional<int> exit_code() const { return exit_code_; }
  // Waits up to `timeout` for the exit; nullopt if still running.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  void kill(int signal);
  // SIGTERM, then SIGKILL after `grace`; returns the exit code.
  int terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(1000));

  const std::string& stdout_path() const { return stdout_path_; }
  const std::string& stderr_path() const { return stderr_path_; }
  std::string read_stdout() const;
  std::string read_stderr() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string name_;
  std::string stdout_path_;
  std::string stderr_path_;
};

struct SimOptions {
  // ibsim table sizes; default: computed from the net file.
  std::optional<SimSizes> sizes;
  // Without opensm nothing has a LID: only ibsim's console and
  // direct-routed queries work.
  bool opensm = true;
  // Bound on the whole bring-up (ibsim ready, SUBNET UP, PMA answering).
  std::chrono::milliseconds timeout{60000};
  // Default bound for console(), run() and lid_of().
  std::chrono::milliseconds command_timeout{30000};
  std::string ibsim_path = "ibsim";
  std::string opensm_path = "opensm";
  std::string preload = kUmad2SimPath;
  // Extra "key value" lines for opensm's generated config file.
  std::vector<std::string> opensm_config;
  // Switch whose PMA is polled to decide the fabric is up (found with
  // ibnetdiscover, whose LID map is then cached); default: the switch at
  // the attach point, found by directed route (cheap on big fabrics).
  std::string probe_switch;
};

class SimFabric {
 public:
  // Brings the fabric up or throws std::runtime_error (with the tails of the
  // ibsim/opensm logs) after cleaning up.
  explicit SimFabric(std::string netfile_text, SimOptions options = {});
  explicit SimFabric(const Fabric& fabric, SimOptions options = {});
  explicit SimFabric(const FatTreeSpec& spec, SimOptions options = {});
  ~SimFabric();
  SimFabric(const SimFabric&) = delete;
  SimFabric& operator=(const SimFabric&) = delete;

  // Temp dir holding the net file, the logs and the clients' fake sysfs.
  const std::string& dir() const { return dir_; }
  const std::string& netfile_path() const { return netfile_path_; }
  const std::string& sockname() const { return sockname_; }
  // What a client needs: LD_PRELOAD (umad2sim) and IBSIM_SOCKNAME.
  EnvMap env() const;
  // -1 if never started (opensm disabled); for tests that kill them.
  pid_t ibsim_pid() const;
  pid_t opensm_pid() const;
  // Wall time from construction to a usable fabric.
  std::chrono::milliseconds bringup_time() const { return bringup_time_; }

  // Sends one line to ibsim's console and waits until ibsim has processed
  // it; returns what ibsim printed for it. Lines are at most 120 characters
  // (ibsim's console buffer is 128).
  std::string console(std::string_view command);
  // PerformanceSet "node"[port] <counter>=<value>; `counter` is
  // "PortCounters.PortXmitWait" or just "PortXmitWait" (PortCounters).
  void perf_set(std::string_view node, int port, std::string_view counter, std::uint64_t value);
  // The link at node[port] goes down (both ends Down/Polling) until relink().
  void unlink(std::string_view node, int port);
  void relink(std::string_view node, int port);
  // Percentage (0..100) of MADs arriving at node[port] that ibsim drops,
  // each counted in the port's PortRcvErrors.
  void error_rate(std::string_view node, int port, int rate);

  // The simulator crashing: SIGKILL to ibsim and opensm (clients stay).
  void kill_simulator();
  // The simulator coming back: kill_simulator() if needed, then a new ibsim
  // (counters at zero) and opensm on the same net file, IBSIM_SOCKNAME and
  // dir(), waiting until the fabric is up as the constructor does. Clients
  // attached to the old ibsim never reach the new one (umad2sim connects
  // once per process); new client processes do. Throws like the constructor.
  void restart_simulator();

  // Runs a client to completion in dir() under the preload (e.g. perfquery,
  // ibnetdiscover as an oracle). timeout 0: options.command_timeout.
  RunResult run(const std::vector<std::string>& argv,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // Starts a long-running client (the daemon) in dir() under the preload,
  // stdout/stderr in dir(). The Process lives until the SimFabric is
  // destroyed, which terminates it first.
  Process& spawn(const std::vector<std::string>& argv, const EnvMap& extra_env = {});

  // LID of a node by ibsim node id (= node description), from ibnetdiscover;
  // for an HCA, the LID of its first cabled port. Throws std::out_of_range
  // for an unknown node (after one refresh).
  int lid_of(std::string_view node);
  std::map<std::string, int> lids(bool refresh = false);

  // The SM's persistent LID assignment (opensm's guid2lid cache file):
  // port GUID (switch: node GUID, port 0) -> base LID. Empty before the
  // first sweep or without opensm.
  std::map<std::uint64_t, int> sm_lid_assignment() const;
  // The subnet manager restarts: opensm is stopped, its guid2lid cache is
  // replaced by `assignment` (when not empty), and a new opensm is started
  // the way the first one was. opensm gives the cached LIDs precedence over
  // the ones the ports still carry, so a permutation really moves LIDs:
  // it rewrites every PortInfo and reprograms the switches' forwarding
  // tables, and an old LID then routes to whichever port now owns it.
  // Returns once the new SM reported SUBNET UP and PMAs answer; the LID map
  // is refreshed. Throws std::runtime_error like the constructor.
  void restart_opensm(const std::map<std::uint64_t, int>& assignment = {});

  // Last lines of ibsim's and opensm's output, for failure messages.
  std::string log_tail(std::size_t lines = 20) const;

  // Which of ibsim and opensm exited without the test stopping them, how
  // (exit status or signal), with the tail of their logs; empty when both
  // run (or were stopped on purpose). Reaps them, so it is cheap to poll.
  std::string unexpected_exits();
  // The test made ibsim or opensm exit on purpose: the exits seen so far
  // are not reported at teardown.
  void acknowledge_exits();
  // Called at teardown with unexpected_exits() when it is not empty. The
  // default prints to stderr; the integration tests' main turns it into a
  // failure of the running test case. Process-wide; returns the previous one.
  using ExitReporter = std::function<void(const std::string& what)>;
  static ExitReporter set_exit_reporter(ExitReporter reporter);

  // Terminates every process and removes dir() (kept if IBFX_KEEP_SIM=1).
  // Idempotent; the destructor calls it.
  void shutdown();

 private:
  void bring_up();
  void start_simulator(std::chrono::steady_clock::time_point deadline);
  void start_ibsim();
  void start_opensm();
  void wait_for_pma(std::chrono::steady_clock::time_point deadline);
  int attached_switch_lid(std::chrono::milliseconds timeout, std::string& problem);
  int probe_switch_lid(std::chrono::milliseconds timeout, std::string& problem);
  [[noreturn]] void fail(const std::string& what) const;
  // unexpected_exits() and shutdown() with mu_ held.
  std::string unexpected_exits_locked();
  // One line per process that exited on its own, no log tail; mu_ held.
  std::string exits_text_locked();
  void shutdown_locked();
  EnvMap client_env() const;
  std::map<std::string, int> discover_lids();

  SimOptions options_;
  std::string netfile_;
  SimSizes sizes_;
  std::string dir_;
  std::string netfile_path_;
  std::string console_path_;
  std::string sockname_;
  bool attach_is_switch_ = false;
  int console_fd_ = -1;
  std::chrono::milliseconds bringup_time_{0};

  std::mutex console_mu_;
  std::size_t console_offset_ = 0;  // ibsim stdout consumed by console()
  std::uint64_t console_seq_ = 0;

  std::mutex mu_;  // guards the members below and processes' lifetime
  bool shut_down_ = false;
  std::optional<Process> ibsim_;
  std::optional<Process> opensm_;
  // Stopped by the test (kill_simulator(), a restart in progress,
  // acknowledge_exits()): their exit is not a failure.
  bool ibsim_stopped_ = false;
  bool opensm_stopped_ = false;
  // Exits found when the test then stopped the processes on purpose.
  std::string earlier_exits_;
  int opensm_restarts_ = 0;
  std::list<Process> children_;  // list: spawn() hands out stable references
  std::uint64_t run_seq_ = 0;
  int restarts_ = 0;
  std::map<std::string, int> lids_;
};

// Maps node descriptions to LIDs in `ibnetdiscover` output (switches: base
// LID; HCAs: LID of the first port listed).
std::map<std::string, int> parse_ibnetdiscover_lids(std::string_view output);

}  // namespace ibfx::test
