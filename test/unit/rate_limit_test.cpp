// The one log-line limiter (base/rate_limit.h).
#include "base/rate_limit.h"

#include <catch2/catch.hpp>
#include <chrono>

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("RateLimit lets the first line through, then one per interval", "[rate_limit]") {
  ibfx::RateLimit<Clock> limit(60s);
  // Any time, the clock's epoch too: the first line is never held back.
  const Clock::time_point t0{};
  CHECK(limit.allow(t0));
  CHECK_FALSE(limit.allow(t0 + 1s));
  CHECK_FALSE(limit.allow(t0 + 59s));
  CHECK(limit.allow(t0 + 60s));
  CHECK_FALSE(limit.allow(t0 + 119s));
  CHECK(limit.allow(t0 + 120s));
}

TEST_CASE("RateLimit lets news through and starts the interval again", "[rate_limit]") {
  ibfx::RateLimit<std::chrono::system_clock> limit(ibfx::kLogEvery);
  const std::chrono::system_clock::time_point t0 = std::chrono::system_clock::now();
  CHECK(limit.allow(t0));
  CHECK(limit.allow(t0 + 10s, true));
  CHECK_FALSE(limit.allow(t0 + 60s));  // a minute after the news, not after the first
  CHECK(limit.allow(t0 + 70s));
}
