// Unix time, once: a clock's time point as Unix seconds (the timestamps of
// series, events and views), and Unix seconds as the views print them:
// "2026-12-03 02:13:00" (UTC, seconds truncated), one spelling for /top,
// the status page and the switch view.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ibfx {

// Seconds since the Unix epoch, with the fraction.
double unix_seconds(std::chrono::system_clock::time_point t);
// unix_seconds() of now.
double unix_seconds_now();

// The last second a view prints, 9999-12-31 23:59:59 UTC: a later time
// (a typo, a time in microseconds) is refused rather than printed as
// whatever the calendar arithmetic overflows to.
inline constexpr double kMaxUnixSeconds = 253402300799;

// A query value that is a time (?since=, ?at=, ?from=): "<key> must be
// Unix seconds (a number from 0 to 253402300799, 9999-12-31 UTC, e.g.
// <key>=1764720000)" in `error` when it is not.
std::optional<double> parse_unix_seconds(std::string_view key, std::string_view text,
                                         std::string& error);

// "" for a time that is not positive (unknown, never) or after
// kMaxUnixSeconds.
std::string utc_time_text(double seconds);

}  // namespace ibfx
