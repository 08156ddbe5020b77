#include "base/utc_time.h"

#include <ctime>

namespace ibfx {

std::string utc_time_text(double unix_seconds) {
  if (!(unix_seconds > 0)) return "";
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%d %H:%M:%S", &tm);
  return out;
}

}  // namespace ibfx
