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
      !std::isfinite(value) || value < 0) {
    error = std::string(key) + " must be Unix seconds (a non-negative number, e.g. " +
            std::string(key) + "=1764720000)";
    return std::nullopt;
  }
  return value;
}

std::string utc_time_text(double seconds) {
  if (!(seconds > 0)) return "";
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%d %H:%M:%S", &tm);
  return out;
}

}  // namespace ibfx
