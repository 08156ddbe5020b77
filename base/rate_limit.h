// At most one log line per interval, for trouble that could be said on
// every sweep, poll or connection (MAD loss, a flood of clients, a Slurm
// host that matches no HCA): the first line passes, then one per interval;
// something new to say passes at once. The one limiter every such line goes
// through; the caller counts what it held back and says so in the next
// line it lets through.
#pragma once

#include <chrono>
#include <optional>

namespace ibfx {

template <typename Clock = std::chrono::steady_clock>
class RateLimit {
 public:
  explicit constexpr RateLimit(typename Clock::duration every) : every_(every) {}

  // Whether a line may be said at `now`; if so, the interval starts again.
  // `news` (a changed reason, say) passes whatever the interval.
  bool allow(typename Clock::time_point now, bool news = false) {
    if (!news && last_ && now - *last_ < every_) return false;
    last_ = now;
    return true;
  }

 private:
  typename Clock::duration every_;
  std::optional<typename Clock::time_point> last_;
};

// Once a minute: what every rate-limited line of the daemon says.
inline constexpr std::chrono::minutes kLogEvery{1};

}  // namespace ibfx
