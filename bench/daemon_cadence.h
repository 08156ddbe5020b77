// The daemon itself at a short sweep interval on the simulated fabric
// (issue #19): the real binary, with its MAD worker and discovery processes,
// run for a while; the cadence, the sweep and render times come from its
// debug log, the CPU use of the daemon and of its MAD worker (and of ibsim,
// the "fabric", sharing the same cores) from /proc/PID/stat.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/proc_stat.h"
#include "test/sim/sim_fabric.h"

namespace ibfx::bench {

// The child of `parent` whose command line contains `marker`, or -1.
inline pid_t child_with(pid_t parent, const std::string& marker) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  pid_t found = -1;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const ProcStat stat = read_proc_stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat.ok || stat.ppid != parent) continue;
    std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
    std::string c((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    std::replace(c.begin(), c.end(), '\0', ' ');
    if (c.find(marker) != std::string::npos) found = pid;
  }
  closedir(proc);
  return found;
}

struct CadenceFigures {
  double seconds = 0;  // the measured window
  std::size_t sweeps = 0, published = 0;
  double sweep_mean = 0, sweep_max = 0;
  double ports_mean = 0;  // ports read per sweep (a cut-short sweep reads part of the fabric)
  double render_mean = 0, render_max = 0;
  std::size_t dropped = 0;  // snapshots replaced before they were rendered
  double daemon_cpu = 0, worker_cpu = 0, ibsim_cpu = 0;  // CPU seconds per second
  // The 1-minute load average at the start and end of the window: the
  // machine is shared, and what else ran says how far the figures stretch.
  double load_before = 0, load_after = 0;
};

// The 1-minute load average (/proc/loadavg, first field).
inline double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return load;
}

// Runs `daemon_exe` on `sim` at `interval`, skips `warmup` after its first
// published sweep, and measures for `window`.
inline CadenceFigures daemon_cadence(ibfx::test::SimFabric& sim, const std::string& daemon_exe,
                                     const std::string& interval, std::chrono::seconds warmup,
                                     std::chrono::seconds window) {
  ibfx::test::Process& daemon =
      sim.spawn({daemon_exe, "--web.listen-address=127.0.0.1:0", "--log.level=debug",
                 "--sweep.interval=" + interval, "--state.directory=" + sim.dir() + "/state"});
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  while (daemon.read_stderr().find("first sweep published") == std::string::npos) {
    if (!daemon.running() || Clock::now() > deadline) {
      throw std::runtime_error("the daemon published no sweep: " + daemon.read_stderr());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::this_thread::sleep_for(warmup);
  const pid_t worker = child_with(daemon.pid(), "--mad-worker");
  const std::size_t mark = daemon.read_stderr().size();
  const double load0 = load_average();
  const auto t0 = Clock::now();
  const double d0 = cpu_seconds(daemon.pid()), w0 = worker > 0 ? cpu_seconds(worker) : 0;
  const double s0 = cpu_seconds(sim.ibsim_pid());
  std::this_thread::sleep_for(window);
  const double d1 = cpu_seconds(daemon.pid()), w1 = worker > 0 ? cpu_seconds(worker) : 0;
  const double s1 = cpu_seconds(sim.ibsim_pid());
  CadenceFigures f;
  f.load_before = load0;
  f.load_after = load_average();
  f.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  f.daemon_cpu = (d1 - d0) / f.seconds;
  f.worker_cpu = (w1 - w0) / f.seconds;
  f.ibsim_cpu = (s1 - s0) / f.seconds;
  const std::string log = daemon.read_stderr().substr(mark);
  daemon.terminate();
  // "sweep N: P ports in D s, ..." per sweep (sweep/sweep_trouble_log.cpp), and
  // "published snapshot N: rendered and compressed in R s, K dropped so far".
  const std::regex sweep_re(R"(msg="sweep [0-9]+: ([0-9]+) ports in ([0-9.]+) s)");
  const std::regex published_re(
      R"(msg="published snapshot [0-9]+: rendered and compressed in ([0-9.]+) s, ([0-9]+) dropped)");
  std::istringstream lines(log);
  std::size_t dropped_first = 0;
  bool first_publish = true;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, sweep_re)) {
      const double d = std::stod(m[2]);
      f.ports_mean += std::stod(m[1]);
      ++f.sweeps;
      f.sweep_mean += d;
      f.sweep_max = std::max(f.sweep_max, d);
    } else if (std::regex_search(line, m, published_re)) {
      const double r = std::stod(m[1]);
      const std::size_t dropped = std::stoull(m[2]);
      if (first_publish) dropped_first = dropped;
      first_publish = false;
      ++f.published;
      f.render_mean += r;
      f.render_max = std::max(f.render_max, r);
      f.dropped = dropped - dropped_first;
    }
  }
  if (f.sweeps > 0) f.sweep_mean /= static_cast<double>(f.sweeps);
  if (f.sweeps > 0) f.ports_mean /= static_cast<double>(f.sweeps);
  if (f.published > 0) f.render_mean /= static_cast<double>(f.published);
  return f;
}

}  // namespace ibfx::bench
