#include "base/utc_time.h"

#include <catch2/catch.hpp>

TEST_CASE("utc_time_text prints UTC to the second, nothing for an unknown time", "[utc_time]") {
  CHECK(ibfx::utc_time_text(1764720000.9) == "2025-12-03 00:00:00");
  CHECK(ibfx::utc_time_text(0).empty());
  CHECK(ibfx::utc_time_text(-5).empty());
  // Past 9999-12-31 nothing, not what the calendar arithmetic overflows to.
  CHECK(ibfx::utc_time_text(ibfx::kMaxUnixSeconds) == "9999-12-31 23:59:59");
  CHECK(ibfx::utc_time_text(1e20).empty());
}

TEST_CASE("parse_unix_seconds takes 0 to 9999-12-31 and says what else it refuses", "[utc_time]") {
  std::string error;
  CHECK(ibfx::parse_unix_seconds("at", "1764720000.5", error) == 1764720000.5);
  CHECK(ibfx::parse_unix_seconds("at", "0", error) == 0);
  CHECK(ibfx::parse_unix_seconds("at", "253402300799", error) == ibfx::kMaxUnixSeconds);
  for (const char* bad :
       {"", "-1", "yesterday", "1e400", "nan", "253402300800", "99999999999999999999"}) {
    INFO(bad);
    error.clear();
    CHECK_FALSE(ibfx::parse_unix_seconds("at", bad, error));
    CHECK_THAT(error, Catch::StartsWith("at must be Unix seconds (a number from 0 to "
                                        "253402300799, 9999-12-31 UTC"));
    CHECK(error.find("milliseconds") == std::string::npos);
  }
  // A time in milliseconds: said so, with the time in seconds.
  CHECK_FALSE(ibfx::parse_unix_seconds("since", "1764720000123", error));
  CHECK_THAT(error, Catch::EndsWith("; in milliseconds? As seconds that is since=1764720000"));
}

TEST_CASE("unix_seconds keeps the fraction of a system_clock time", "[utc_time]") {
  using std::chrono::milliseconds;
  const std::chrono::system_clock::time_point t{milliseconds(1'764'728'580'250)};
  CHECK(ibfx::unix_seconds(t) == Approx(1'764'728'580.25).epsilon(0).margin(1e-3));
  CHECK(ibfx::unix_seconds(std::chrono::system_clock::time_point{}) == 0);
  const double before = ibfx::unix_seconds(std::chrono::system_clock::now());
  CHECK(ibfx::unix_seconds_now() >= before);
}
