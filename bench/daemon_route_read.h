// The daemon's first full read of the forwarding tables on the simulated
// fabric (issue #41: at 98k ports a full read within 60 s, the sweeps
// keeping their cadence meanwhile): the real binary from its start, its
// route reader at the default budget. The read's length and SMPs come from
// its own metrics (infiniband_exporter_route_*, scraped from the aggregates
// group once a second), the cadence from its debug log's sweep lines and
// its overrun and cut-short counters, CPU from /proc/PID/stat: whether the
// simulator (one thread) or the daemon was the busy one.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/daemon_cadence.h"
#include "http/http_get.h"
#include "test/sim/sim_fabric.h"

namespace ibfx::bench {

// The series of one scrape that the measurement needs ("name{labels}" ->
// value); the rest is skipped unparsed.
inline std::map<std::string, double> exporter_series(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("infiniband_exporter_")) continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
      // NaN and the like: not a figure this measurement uses.
    }
  }
  return out;
}

inline double series_or(const std::map<std::string, double>& s, const std::string& key,
                        double fallback = 0) {
  const auto it = s.find(key);
  return it == s.end() ? fallback : it->second;
}

struct RouteReadFigures {
  bool finished = false;         // a full read ended within the time allowed
  double until_first_sweep = 0;  // from the spawn: discovery and the first sweep
  double full_read_seconds = 0;  // the daemon's own figure (the pass's start to its end)
  double waited = 0;             // from the first sweep to the scrape that saw it (or the cap)
  double smps_answered = 0, smps_failed = 0, smps_cancelled = 0;
  double tables = 0, incomplete = 0;  // switches, and of them never read whole
  // The sweeps from the first to that scrape: the cadence during the read.
  std::size_t sweeps = 0, cut_short = 0;
  double overruns = 0;  // the daemon's sweep_overruns_total (longer than the interval)
  double sweep_mean = 0, sweep_max = 0;
  double ports_mean = 0, ports_min = 0;  // ports read per sweep (a cut one reads part)
  // Every MAD of the engine (sweeps and routes) since the start: answered,
  // and queued but cut by a sweep's deadline.
  double mads_ok = 0, mads_cancelled = 0;
  double gap_max = 0;  // the longest time between two sweeps' log lines
  double daemon_cpu = 0, worker_cpu = 0, ibsim_cpu = 0;  // CPU seconds per second
  double load_before = 0, load_after = 0;
};

// Seconds of the day of a log line's ts=...THH:MM:SS.mmmZ (logfmt), or -1.
inline double log_seconds(const std::string& line) {
  const auto ts = line.find("ts=");
  if (ts == std::string::npos || line.size() < ts + 26) return -1;
  const std::string t = line.substr(ts + 14, 12);  // HH:MM:SS.mmm
  return std::stod(t.substr(0, 2)) * 3600 + std::stod(t.substr(3, 2)) * 60 + std::stod(t.substr(6));
}

// Runs `daemon_exe` on `sim` with `extra_args` (none: the default
// configuration) until its first full read of the tables ends, or for
// `cap` after its first sweep. With `routes` false (the caller turned the
// reader off) it runs for `cap`: the cadence without route reads, to set
// against the one with them.
inline RouteReadFigures daemon_route_read(ibfx::test::SimFabric& sim, const std::string& daemon_exe,
                                          const std::vector<std::string>& extra_args, bool routes,
                                          std::chrono::seconds cap) {
  // A state directory of its own per run: each starts as a fresh daemon.
  static int runs = 0;
  std::vector<std::string> argv = {
      daemon_exe, "--web.listen-address=127.0.0.1:0", "--log.level=debug",
      "--state.directory=" + sim.dir() + "/route-read-state-" + std::to_string(++runs)};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  const auto spawned = Clock::now();
  ibfx::test::Process& daemon = sim.spawn(argv);
  const std::regex listening(R"(listening on .* \(port ([0-9]+)\))");
  int port = 0;
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  for (;;) {
    const std::string err = daemon.read_stderr();
    std::smatch m;
    if (port == 0 && std::regex_search(err, m, listening)) port = std::stoi(m[1]);
    if (port != 0 && err.find("msg=\"sweep ") != std::string::npos) break;
    if (!daemon.running() || Clock::now() > deadline) {
      throw std::runtime_error("the daemon swept nothing: " + err);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  RouteReadFigures f;
  f.until_first_sweep = std::chrono::duration<double>(Clock::now() - spawned).count();
  const pid_t worker = child_with(daemon.pid(), "--mad-worker");
  f.load_before = load_average();
  const auto t0 = Clock::now();
  const double d0 = cpu_seconds(daemon.pid()), w0 = worker > 0 ? cpu_seconds(worker) : 0;
  const double s0 = cpu_seconds(sim.ibsim_pid());
  std::map<std::string, double> s;
  while (Clock::now() - t0 < cap) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    HttpGetRequest request;
    request.url = "http://127.0.0.1:" + std::to_string(port);
    request.target = "/metrics?collect[]=aggregates";
    request.body_limit = 64 << 20;
    request.deadline = Clock::now() + std::chrono::seconds(30);
    const HttpGetResult r = http_get(request);
    if (r.outcome != HttpGetResult::Outcome::kAnswered || r.status != 200) continue;
    s = exporter_series(r.body);
    if (routes && series_or(s, "infiniband_exporter_route_full_reads_total") >= 1) {
      f.finished = true;
      break;
    }
  }
  f.waited = std::chrono::duration<double>(Clock::now() - t0).count();
  const double d1 = cpu_seconds(daemon.pid()), w1 = worker > 0 ? cpu_seconds(worker) : 0;
  const double s1 = cpu_seconds(sim.ibsim_pid());
  f.load_after = load_average();
  f.daemon_cpu = (d1 - d0) / f.waited;
  f.worker_cpu = (w1 - w0) / f.waited;
  f.ibsim_cpu = (s1 - s0) / f.waited;
  f.full_read_seconds = series_or(s, "infiniband_exporter_route_full_read_seconds");
  f.smps_answered = series_or(s, R"(infiniband_exporter_route_smps_total{result="answered"})");
  f.smps_failed = series_or(s, R"(infiniband_exporter_route_smps_total{result="failed"})");
  f.smps_cancelled = series_or(s, R"(infiniband_exporter_route_smps_total{result="cancelled"})");
  f.tables = series_or(s, "infiniband_exporter_route_tables");
  f.incomplete = series_or(s, "infiniband_exporter_route_tables_incomplete");
  f.overruns = series_or(s, "infiniband_exporter_sweep_overruns_total");
  f.mads_ok = series_or(s, R"(infiniband_exporter_mad_requests_total{result="ok"})");
  f.mads_cancelled = series_or(s, "infiniband_exporter_mad_requests_cancelled_total");
  const std::string log = daemon.read_stderr();
  // IBFX_BENCH_LOG_DIR keeps each daemon's log (the simulator's directory
  // goes with it).
  if (const char* keep = std::getenv("IBFX_BENCH_LOG_DIR")) {
    std::ofstream(std::string(keep) + "/route-read-" + std::to_string(runs) + ".log") << log;
  }
  daemon.terminate();
  // "sweep N: P ports in D s, ..." per sweep (sweep/sweep_trouble_log.cpp),
  // "cut short by its budget" when the deadline came first.
  const std::regex sweep_re(R"(msg="sweep [0-9]+: ([0-9]+) ports in ([0-9.]+) s)");
  std::istringstream lines(log);
  double last = -1;
  f.ports_min = 1e18;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, sweep_re)) continue;
    const double d = std::stod(m[2]);
    ++f.sweeps;
    f.sweep_mean += d;
    f.sweep_max = std::max(f.sweep_max, d);
    f.ports_mean += std::stod(m[1]);
    f.ports_min = std::min(f.ports_min, std::stod(m[1]));
    // Not the warning's "(0 cut short, ...)" tally of earlier sweeps.
    if (line.find("cut short by its budget") != std::string::npos) ++f.cut_short;
    const double at = log_seconds(line);
    if (last >= 0 && at >= 0) f.gap_max = std::max(f.gap_max, at - last);
    last = at;
  }
  if (f.sweeps > 0) f.sweep_mean /= static_cast<double>(f.sweeps);
  if (f.sweeps > 0) f.ports_mean /= static_cast<double>(f.sweeps);
  if (f.sweeps == 0) f.ports_min = 0;
  return f;
}

}  // namespace ibfx::bench
