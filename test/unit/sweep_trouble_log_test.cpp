// SweepTroubleLog: every sweep's line at debug; trouble (a sweep cut short
// or outlasting its interval, silent nodes, dropped snapshots) as a warning
// once a minute at most, summed up since the last one.
#include "sweep/sweep_trouble_log.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

using namespace ibfx;
using namespace std::chrono_literals;

namespace {
SweepResult good_sweep() {
  SweepResult s;
  s.ports_read = 40;
  s.duration_seconds = 0.25;
  return s;
}
SweepResult cut_short() {
  SweepResult s = good_sweep();
  s.completed = false;
  s.stale_nodes = 3;
  return s;
}
bool log_mentions(const LogLine& line, const std::string& what) {
  return line.text.find(what) != std::string::npos;
}
// Well after the clock's epoch: the first trouble is warned of at once.
const SweepTroubleLog::Clock::time_point kLogT0 = SweepTroubleLog::Clock::time_point{} + 1h;
constexpr Duration kLogInterval{1000};
}  // namespace

TEST_CASE("SweepTroubleLog: a good sweep is a debug line", "[sweep_trouble_log]") {
  SweepTroubleLog log;
  const LogLine line = log.note(good_sweep(), 7, 0, false, 0, kLogInterval, kLogT0);
  CHECK(line.level == LogLevel::kDebug);
  CHECK(line.text == "sweep 7: 40 ports in 0.250000 s, 0 nodes not answering, 0 MAD timeouts");
}

TEST_CASE("SweepTroubleLog warns of trouble once a minute, summed up since",
          "[sweep_trouble_log]") {
  SweepTroubleLog log;
  LogLine line = log.note(cut_short(), 1, 0, true, 0, kLogInterval, kLogT0);
  CHECK(line.level == LogLevel::kWarn);
  CHECK(line.text ==
        "sweep 1: 40 ports in 0.250000 s, 0 nodes not answering, 0 MAD timeouts, cut short by "
        "its budget with 3 nodes not reached (kept as they were); 1 of the last 1 sweeps "
        "outlasted the 1s interval (1 cut short, each resumed by the next): this fabric needs a "
        "longer sweep.interval, or more MADs in flight (mad.global_inflight)");

  // Within the minute: debug lines, counted.
  line = log.note(cut_short(), 2, 0, true, 0, kLogInterval, kLogT0 + 10s);
  CHECK(line.level == LogLevel::kDebug);
  CHECK(log_mentions(line, "cut short by its budget"));
  CHECK(log.note(good_sweep(), 3, 0, true, 0, kLogInterval, kLogT0 + 20s).level ==
        LogLevel::kDebug);
  CHECK(log.note(good_sweep(), 4, 0, false, 0, kLogInterval, kLogT0 + 30s).level ==
        LogLevel::kDebug);

  // A minute on: the sum since the last warning, this sweep included.
  line = log.note(cut_short(), 5, 0, false, 0, kLogInterval, kLogT0 + 60s);
  CHECK(line.level == LogLevel::kWarn);
  CHECK(log_mentions(line, "; 2 of the last 4 sweeps outlasted the 1s interval (2 cut short"));

  // Trouble-free sweeps never warn, however long since.
  CHECK(log.note(good_sweep(), 6, 0, false, 0, kLogInterval, kLogT0 + 600s).level ==
        LogLevel::kDebug);
}

TEST_CASE("SweepTroubleLog: silent nodes and dropped snapshots are trouble too",
          "[sweep_trouble_log]") {
  SweepTroubleLog log;
  LogLine line = log.note(good_sweep(), 1, 2, false, 0, kLogInterval, kLogT0);
  CHECK(line.level == LogLevel::kWarn);
  CHECK(line.text == "sweep 1: 40 ports in 0.250000 s, 2 nodes not answering, 0 MAD timeouts");

  // Snapshots dropped since the last warning: how many.
  line = log.note(good_sweep(), 2, 0, false, 5, kLogInterval, kLogT0 + 61s);
  CHECK(line.level == LogLevel::kWarn);
  CHECK(log_mentions(line, "; 5 snapshots were not served"));
  // The same count again is no news ...
  CHECK(log.note(good_sweep(), 3, 0, false, 5, kLogInterval, kLogT0 + 200s).level ==
        LogLevel::kDebug);
  // ... more are, counted from the last warning.
  line = log.note(good_sweep(), 4, 0, false, 8, kLogInterval, kLogT0 + 300s);
  CHECK(line.level == LogLevel::kWarn);
  CHECK(log_mentions(line, "; 3 snapshots were not served"));
}
