#include "links/link_direction.h"

#include <catch2/catch.hpp>

namespace {
constexpr double kHdr4x = 200e9;  // 4 lanes x 50 Gb/s
constexpr double kDirectionT0 = 1'000'000;
}  // namespace

TEST_CASE("LinkDirection: a BER of 1e-10 is an error within two sweeps", "[links]") {
  const ibfx::LinkHealthConfig config;
  ibfx::LinkDirection d(config);
  // 1e-10 at 200 Gb/s: 20 errors a second, sweeps 1 s apart.
  d.add(kDirectionT0 + 1, {.symbol = 20});
  ibfx::DirectionVerdict v = d.evaluate(kDirectionT0 + 1, kHdr4x, 1, false, config);
  CHECK(v.ber == ibfx::LinkCondition::kBerError);
  CHECK(v.symbol_ber == Approx(1e-10));
  d.add(kDirectionT0 + 2, {.symbol = 20});
  v = d.evaluate(kDirectionT0 + 2, kHdr4x, 2, false, config);
  CHECK(v.ber == ibfx::LinkCondition::kBerError);
  CHECK(v.symbol_ber == Approx(1e-10));
  CHECK(v.worst() == ibfx::LinkCondition::kBerError);
}

TEST_CASE("LinkDirection: fewer than min_errors never alarm, whatever the BER", "[links]") {
  const ibfx::LinkHealthConfig config;
  ibfx::LinkDirection d(config);
  d.add(kDirectionT0, {.symbol = 2});
  const ibfx::DirectionVerdict v = d.evaluate(kDirectionT0, kHdr4x, 1, false, config);
  CHECK(v.ber == ibfx::LinkCondition::kNone);
  CHECK(v.symbol_ber == Approx(1e-11));  // still reported
  CHECK_FALSE(v.link_errors);
}

TEST_CASE("LinkDirection: warning and error over the long window, then hysteresis", "[links]") {
  SECTION("between ber_warning and ber_error_long over 12 minutes is a warning") {
    // At 200 Gb/s 12 minutes are 1.44e14 bits: with the default
    // ber_error_long (1e-14) three errors are already an error, so the
    // warning band is looked at with ber_error_long raised to 1e-12.
    ibfx::LinkHealthConfig config;
    config.ber_error_long = 1e-12;
    ibfx::LinkDirection d(config);
    // One error every 15 s: 4 in the last minute (3.3e-13, below 1e-12),
    // 48 over 12 minutes (3.3e-13, above 5e-15).
    ibfx::DirectionVerdict v;
    for (int i = 1; i <= 48; ++i) {
      d.add(kDirectionT0 + 15.0 * i, {.symbol = 1});
      v = d.evaluate(kDirectionT0 + 15.0 * i, kHdr4x, 15.0 * i + 1000, false, config);
    }
    CHECK(v.ber == ibfx::LinkCondition::kBerWarning);
    CHECK(v.symbol_ber == Approx(4 / (kHdr4x * 60)));
  }
  SECTION("with the defaults, three errors in 12 minutes are an error; two are nothing") {
    const ibfx::LinkHealthConfig config;
    ibfx::LinkDirection d(config);
    d.add(kDirectionT0 + 15, {.symbol = 1});
    d.add(kDirectionT0 + 400, {.symbol = 1});
    ibfx::DirectionVerdict v = d.evaluate(kDirectionT0 + 400, kHdr4x, 5000, false, config);
    CHECK(v.ber == ibfx::LinkCondition::kNone);
    CHECK(v.symbol_ber > 0);
    d.add(kDirectionT0 + 700, {.symbol = 1});
    v = d.evaluate(kDirectionT0 + 700, kHdr4x, 5000, false, config);
    CHECK(v.ber == ibfx::LinkCondition::kBerError);  // 3 / 1.44e14 = 2.1e-14
  }
  SECTION("an error holds until the long window is clean") {
    const ibfx::LinkHealthConfig config;
    ibfx::LinkDirection d(config);
    ibfx::DirectionVerdict v;
    for (int i = 1; i <= 4; ++i) {
      d.add(kDirectionT0 + 15.0 * i, {.symbol = 60});
      v = d.evaluate(kDirectionT0 + 15.0 * i, kHdr4x, 15.0 * i + 1000, false, config);
    }
    CHECK(v.ber == ibfx::LinkCondition::kBerError);  // 240 in a minute: 2e-11
    const double last = kDirectionT0 + 60;
    // Clean since: a minute later the short window is empty, the long one
    // still holds the errors; once it is clean too, the error clears.
    v = d.evaluate(last + 400, kHdr4x, 5000, false, config);
    CHECK(v.ber == ibfx::LinkCondition::kBerError);
    CHECK_FALSE(d.idle(last + 400));
    v = d.evaluate(last + 740, kHdr4x, 5000, false, config);
    CHECK(v.ber == ibfx::LinkCondition::kNone);
    CHECK(v.symbol_ber < 0);
    CHECK(d.idle(last + 740));
  }
  SECTION("hysteresis: a warning raised holds while the BER sits between clear and warning") {
    ibfx::LinkHealthConfig config;
    config.ber_error_long = 1e-12;
    config.ber_warning = 1e-13;
    config.ber_clear = 1e-14;
    ibfx::LinkDirection d(config);
    for (int i = 1; i <= 48; ++i) d.add(kDirectionT0 + 15.0 * i, {.symbol = 1});  // 3.3e-13
    CHECK(d.evaluate(kDirectionT0 + 720, kHdr4x, 5000, false, config).ber ==
          ibfx::LinkCondition::kBerWarning);
    // 10 minutes on, 8 errors left in the window: 5.6e-14, below the
    // warning, above the clear level: held.
    CHECK(d.evaluate(kDirectionT0 + 1320, kHdr4x, 5000, false, config).ber ==
          ibfx::LinkCondition::kBerWarning);
    CHECK(d.evaluate(kDirectionT0 + 1500, kHdr4x, 5000, false, config).ber ==
          ibfx::LinkCondition::kNone);
  }
}

TEST_CASE("LinkDirection: a saturated counter holds its condition and says 'at least'", "[links]") {
  const ibfx::LinkHealthConfig config;
  ibfx::LinkDirection d(config);
  d.add(kDirectionT0, {.symbol = 1000});
  CHECK(d.evaluate(kDirectionT0, kHdr4x, 10, true, config).ber == ibfx::LinkCondition::kBerError);
  const ibfx::DirectionVerdict v = d.evaluate(kDirectionT0 + 2000, kHdr4x, 2010, true, config);
  CHECK(v.ber == ibfx::LinkCondition::kBerError);
  CHECK(v.at_least);
  CHECK(d.evaluate(kDirectionT0 + 2000, kHdr4x, 2010, false, config).ber ==
        ibfx::LinkCondition::kNone);
}

TEST_CASE("LinkDirection: link_errors from integrity, overrun and recoveries", "[links]") {
  const ibfx::LinkHealthConfig config;
  {
    ibfx::LinkDirection d(config);
    d.add(kDirectionT0, {.integrity = 1});
    CHECK(d.evaluate(kDirectionT0, kHdr4x, 10, false, config).link_errors);
    CHECK(d.evaluate(kDirectionT0, kHdr4x, 10, false, config).worst() ==
          ibfx::LinkCondition::kLinkErrors);
    CHECK_FALSE(d.evaluate(kDirectionT0 + 800, kHdr4x, 810, false, config).link_errors);
  }
  {
    ibfx::LinkDirection d(config);
    d.add(kDirectionT0, {.overrun = 1});
    CHECK(d.evaluate(kDirectionT0, kHdr4x, 10, false, config).link_errors);
  }
  {
    ibfx::LinkDirection d(config);
    d.add(kDirectionT0, {.recoveries = 2});
    CHECK_FALSE(d.evaluate(kDirectionT0, kHdr4x, 10, false, config).link_errors);
    d.add(kDirectionT0 + 100, {.recoveries = 1});
    CHECK(d.evaluate(kDirectionT0 + 100, kHdr4x, 110, false, config).link_errors);
  }
}

TEST_CASE("LinkDirection: no line rate, no BER", "[links]") {
  const ibfx::LinkHealthConfig config;
  ibfx::LinkDirection d(config);
  d.add(kDirectionT0, {.symbol = 100});
  const ibfx::DirectionVerdict v = d.evaluate(kDirectionT0, 0, 10, false, config);
  CHECK(v.ber == ibfx::LinkCondition::kNone);
  CHECK(v.symbol_ber < 0);
}
