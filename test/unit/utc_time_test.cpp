#include "base/utc_time.h"

#include <catch2/catch.hpp>

TEST_CASE("utc_time_text prints UTC to the second, nothing for an unknown time", "[utc_time]") {
  CHECK(ibfx::utc_time_text(1764720000.9) == "2025-12-03 00:00:00");
  CHECK(ibfx::utc_time_text(0).empty());
  CHECK(ibfx::utc_time_text(-5).empty());
}

TEST_CASE("unix_seconds keeps the fraction of a system_clock time", "[utc_time]") {
  using std::chrono::milliseconds;
  const std::chrono::system_clock::time_point t{milliseconds(1'764'728'580'250)};
  CHECK(ibfx::unix_seconds(t) == Approx(1'764'728'580.25).epsilon(0).margin(1e-3));
  CHECK(ibfx::unix_seconds(std::chrono::system_clock::time_point{}) == 0);
  const double before = ibfx::unix_seconds(std::chrono::system_clock::now());
  CHECK(ibfx::unix_seconds_now() >= before);
}
