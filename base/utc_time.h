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

// A query value that is a time (?since=, ?at=, ?from=): "<key> must be
// Unix seconds (a non-negative number, e.g. <key>=1764720000)" in `error`
// when it is not.
std::optional<double> parse_unix_seconds(std::string_view key, std::string_view text,
                                         std::string& error);

// "" for a time that is not positive (unknown, never).
std::string utc_time_text(double seconds);

}  // namespace ibfx
