// What each sweep says in the log. Under MAD loss, or with an interval
// shorter than the fabric needs, every sweep has something to say: it is
// said once a minute at most, as a warning summed up since the last one;
// every other sweep's line is a debug line. Sweep thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "base/log_line.h"
#include "base/rate_limit.h"
#include "config/config.h"
#include "sweep/sweeper.h"

namespace ibfx {

class SweepTroubleLog {
 public:
  using Clock = std::chrono::steady_clock;

  // Sweep number `number`; `not_answering` nodes asked and silent;
  // `overrun`: it outlasted `interval`; `snapshots_dropped`: the
  // publisher's drops so far (PublisherStats::dropped).
  LogLine note(const SweepResult& sweep, std::uint64_t number, std::size_t not_answering,
               bool overrun, std::uint64_t snapshots_dropped, Duration interval,
               Clock::time_point now = Clock::now());

 private:
  RateLimit<Clock> warnings_{kLogEvery};
  // Since the last warning.
  std::uint64_t sweeps_ = 0, overruns_ = 0, cut_short_ = 0;
  std::uint64_t dropped_seen_ = 0;  // publisher drops, as of the last warning
};

}  // namespace ibfx
