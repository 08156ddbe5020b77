#include "base/utc_time.h"

#include <catch2/catch.hpp>

TEST_CASE("utc_time_text prints UTC to the second, nothing for an unknown time", "[utc_time]") {
  CHECK(ibfx::utc_time_text(1764720000.9) == "2025-12-03 00:00:00");
  CHECK(ibfx::utc_time_text(0).empty());
  CHECK(ibfx::utc_time_text(-5).empty());
}
