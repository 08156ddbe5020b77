#include "discovery/stderr_tap.h"

#include <catch2/catch.hpp>
#include <cstdio>

using ibfx::StderrCounts;
using ibfx::StderrTap;

TEST_CASE("StderrTap counts libibnetdisc's lost SMPs apart from other errors", "[stderr_tap]") {
  StderrCounts counts;
  {
    StderrTap tap(1);
    REQUIRE(tap.active());
    for (int i = 0; i < 3; ++i) {
      std::fprintf(stderr,
                   "ibwarn: [1] process_one_recv: umad (DR path slid 0; dlid 0; 0,1,%d Attr "
                   "0x11:0) bad status 110; Connection timed out\n",
                   i);
    }
    std::fprintf(stderr,
                 "ibwarn: [1] process_one_recv: mad (DR path slid 0; dlid 0; 0,1 Attr "
                 "0x15:3) bad status 0x1c\n");
    std::fprintf(stderr, "something else, without a newline at the end");
    counts = tap.stop();
    CHECK_FALSE(tap.active());
  }
  CHECK(counts.smp_timeouts == 3);
  CHECK(counts.smp_errors == 1);
  CHECK(counts.lines == 5);
  CHECK(counts.suppressed == 4);  // only the first one was passed on
}

TEST_CASE("StderrTap::classify", "[stderr_tap]") {
  StderrCounts c;
  StderrTap::classify("umad (...) bad status 110; Connection timed out", c);
  StderrTap::classify("umad (...) bad status 1100; ???", c);
  StderrTap::classify("discovered 86 nodes", c);
  CHECK(c.smp_timeouts == 1);
  CHECK(c.smp_errors == 1);
  CHECK(c.lines == 3);
}
