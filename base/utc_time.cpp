#include "base/utc_time.h"

#include <charconv>
#include <cmath>
#include <ctime>

namespace ibfx {

double unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

double unix_seconds_now() { return unix_seconds(std::chrono::system_clock::now()); }

std::optional<double> parse_unix_seconds(std::string_view key, std::string_view text,
                                         std::string& error) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0 || value > kMaxUnixSeconds) {
    error = std::string(key) +
            " must be Unix seconds (a number from 0 to 253402300799, 9999-12-31 UTC, e.g. " +
            std::string(key) + "=1764720000)";
    // The usual slip: a time in milliseconds (JavaScript's, Grafana's),
    // after 2001 once read as seconds.
    if (ec == std::errc() && end == text.data() + text.size() && value / 1000 >= 1e9 &&
        value / 1000 <= kMaxUnixSeconds) {
      error += "; in milliseconds? As seconds that is " + std::string(key) + "=" +
               std::to_string(static_cast<long long>(value / 1000));
    }
    return std::nullopt;
  }
  return value;
}

std::string utc_time_text(double seconds) {
  if (!(seconds > 0) || seconds > kMaxUnixSeconds) return "";
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%d %H:%M:%S", &tm);
  return out;
}

}  // namespace ibfx
