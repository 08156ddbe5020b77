#include "base/utc_time.h"

#include <ctime>

namespace ibfx {

double unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

double unix_seconds_now() { return unix_seconds(std::chrono::system_clock::now()); }

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
