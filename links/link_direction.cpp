#include "links/link_direction.h"

#include <algorithm>

namespace ibfx {

DirectionVerdict LinkDirection::evaluate(double now, double bits_per_second, double watched_seconds,
                                         bool saturated, const LinkHealthConfig& config) {
  DirectionVerdict v;
  v.at_least = saturated;
  const LinkErrorCounts shorter = window_.sum(now, config.short_window_seconds);
  v.long_window = window_.sum(now, config.long_window_seconds);
  // BER = symbol errors / (active lanes x lane rate x time): the line rate,
  // not the bytes moved, is the denominator (UFM's port isolation, PDR).
  const double short_seconds = std::min(config.short_window_seconds, watched_seconds);
  const double long_seconds = std::min(config.long_window_seconds, watched_seconds);
  auto ber = [&](std::uint64_t errors, double seconds) {
    return bits_per_second > 0 && seconds > 0
               ? static_cast<double>(errors) / (bits_per_second * seconds)
               : 0.0;
  };
  const double ber_short = ber(shorter.symbol, short_seconds);
  const double ber_long = ber(v.long_window.symbol, long_seconds);
  if (bits_per_second > 0) {
    if (shorter.symbol > 0) {
      v.symbol_ber = ber_short;
    } else if (v.long_window.symbol > 0) {
      v.symbol_ber = ber_long;
    }
  }
  // Each verdict needs min_errors in its window: one stray error never alarms.
  const bool short_counts = shorter.symbol >= config.min_errors;
  const bool long_counts = v.long_window.symbol >= config.min_errors;
  LinkCondition now_ber = LinkCondition::kNone;
  if ((short_counts && ber_short >= config.ber_error_short) ||
      (long_counts && ber_long >= config.ber_error_long)) {
    now_ber = LinkCondition::kBerError;
  } else if (long_counts && ber_long >= config.ber_warning) {
    now_ber = LinkCondition::kBerWarning;
  }
  // Hysteresis: a condition holds until the long window is clean (BER at or
  // below ber_clear); a saturated counter counts nothing more, so it cannot
  // show the cable got better and holds what it had.
  if (now_ber >= held_ || (!saturated && ber_long <= config.ber_clear)) held_ = now_ber;
  v.ber = held_;
  // Any LocalLinkIntegrityErrors or ExcessiveBufferOverrunErrors increment
  // (IBA 16.1.3.5) in the window, or link error recoveries above the rate:
  // held by the window itself.
  v.link_errors = v.long_window.integrity > 0 || v.long_window.overrun > 0 ||
                  v.long_window.recoveries >= config.link_error_recoveries;
  return v;
}

}  // namespace ibfx
