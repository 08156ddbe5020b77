#include "http/content_negotiation.h"

#include <catch2/catch.hpp>

TEST_CASE("accepts_gzip honours codings and q-values", "[http][content_negotiation]") {
  CHECK(ibfx::accepts_gzip("gzip"));
  CHECK(ibfx::accepts_gzip("GZip"));
  CHECK(ibfx::accepts_gzip("x-gzip"));
  CHECK(ibfx::accepts_gzip("gzip, deflate, br"));
  CHECK(ibfx::accepts_gzip("deflate, gzip;q=0.5"));
  CHECK(ibfx::accepts_gzip("gzip ; q=1.0"));
  CHECK(ibfx::accepts_gzip("*"));
  CHECK(ibfx::accepts_gzip("br;q=1, *;q=0.1"));
  CHECK(ibfx::accepts_gzip("gzip;level=1;q=0.3"));
  CHECK_FALSE(ibfx::accepts_gzip(""));
  CHECK_FALSE(ibfx::accepts_gzip("identity"));
  CHECK_FALSE(ibfx::accepts_gzip("deflate, br"));
  CHECK_FALSE(ibfx::accepts_gzip("gzip;q=0"));
  CHECK_FALSE(ibfx::accepts_gzip("gzip; Q=0.000"));
  CHECK_FALSE(ibfx::accepts_gzip("*;q=0"));
  CHECK_FALSE(ibfx::accepts_gzip("gzip;q=0, *"));  // explicit entry beats the wildcard
  CHECK_FALSE(ibfx::accepts_gzip("gzipper"));
  CHECK_FALSE(ibfx::accepts_gzip("gzip;q=banana"));
}
