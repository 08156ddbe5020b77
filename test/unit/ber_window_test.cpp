#include "links/ber_window.h"

#include <catch2/catch.hpp>

TEST_CASE("BerWindow: sums whole buckets within the window and forgets older ones", "[links]") {
  ibfx::BerWindow w(720);  // 15 s buckets
  const double t0 = 1'000'000;
  w.add(t0, {.symbol = 5});
  w.add(t0 + 30, {.symbol = 7, .recoveries = 1});
  w.add(t0 + 31, {.integrity = 2, .overrun = 1});
  const ibfx::LinkErrorCounts all = w.sum(t0 + 31, 720);
  CHECK(all.symbol == 12);
  CHECK(all.recoveries == 1);
  CHECK(all.integrity == 2);
  CHECK(all.overrun == 1);
  // The last 15 s: only the bucket of t0+30.
  CHECK(w.sum(t0 + 31, 15).symbol == 7);
  CHECK_FALSE(w.empty(t0 + 31));
  // 12 minutes later the errors of t0 are out of the long window, those of
  // t0 + 30 not yet.
  CHECK(w.sum(t0 + 725, 720).symbol == 7);
  CHECK(w.empty(t0 + 800));
  // A bucket reused a long window later starts from zero.
  w.add(t0 + 720, {.symbol = 1});
  CHECK(w.sum(t0 + 720, 15).symbol == 1);
}

TEST_CASE("BerWindow: counts saturate instead of wrapping", "[links]") {
  ibfx::BerWindow w(720);
  w.add(100, {.symbol = 0xffffffffULL});
  w.add(100, {.symbol = 10, .integrity = 100000});
  CHECK(w.sum(100, 60).symbol == 0xffffffffULL);
  CHECK(w.sum(100, 60).integrity == 0xffff);
}
