#include "sweep/sweep_trouble_log.h"

#include <string>

namespace ibfx {

LogLine SweepTroubleLog::note(const SweepResult& sweep, std::uint64_t number,
                              std::size_t not_answering, bool overrun,
                              std::uint64_t snapshots_dropped, Duration interval,
                              Clock::time_point now) {
  ++sweeps_;
  overruns_ += overrun ? 1 : 0;
  cut_short_ += sweep.completed ? 0 : 1;
  std::string line =
      "sweep " + std::to_string(number) + ": " + std::to_string(sweep.ports_read) + " ports in " +
      std::to_string(sweep.duration_seconds) + " s, " + std::to_string(not_answering) +
      " nodes not answering, " + std::to_string(sweep.mads_timeout) + " MAD timeouts" +
      (sweep.completed ? ""
                       : ", cut short by its budget with " + std::to_string(sweep.stale_nodes) +
                             " nodes not reached (kept as they were)");
  // Snapshots the publisher dropped: rendering and compressing one takes
  // longer than a sweep, so not every sweep is served (the counters still
  // are: totals carry into the next one).
  const bool dropped = snapshots_dropped != dropped_seen_;
  const bool trouble = !sweep.completed || overrun || not_answering > 0 || dropped;
  if (!trouble || !warnings_.allow(now)) return {LogLevel::kDebug, std::move(line)};
  if (overruns_ > 0 || cut_short_ > 0) {
    line += "; " + std::to_string(overruns_) + " of the last " + std::to_string(sweeps_) +
            " sweeps outlasted the " + format_duration(interval) + " interval (" +
            std::to_string(cut_short_) +
            " cut short, each resumed by the next): this fabric needs a longer "
            "sweep.interval, or more MADs in flight (mad.global_inflight)";
  }
  if (dropped) {
    line += "; " + std::to_string(snapshots_dropped - dropped_seen_) +
            " snapshots were not served: rendering and compressing one took longer than the "
            "sweeps (a leaner export: selection, fewer series)";
  }
  sweeps_ = overruns_ = cut_short_ = 0;
  dropped_seen_ = snapshots_dropped;
  return {LogLevel::kWarn, std::move(line)};
}

}  // namespace ibfx
