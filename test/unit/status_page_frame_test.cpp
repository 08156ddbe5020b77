// What the status pages share: the script's hash in the CSP, the colour
// scale, times and numbers as text.
#include "views/status_page_frame.h"

#include <openssl/sha.h>

#include <catch2/catch.hpp>
#include <string>

#include "test/support/base64.h"
#include "test/support/status_support.h"

namespace ibfx {

TEST_CASE("the CSP allows exactly the page's script, by its SHA-256", "[status_page_frame]") {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(kStatusScript.data()), kStatusScript.size(),
         digest);
  const std::string hash =
      test::base64(std::string(reinterpret_cast<const char*>(digest), sizeof digest));
  CHECK(hash == kStatusScriptSha256);
  CHECK(std::string(kStatusCsp).find("script-src 'sha256-" + hash + "'") != std::string::npos);
  CHECK(std::string(kStatusCsp).find("default-src 'none'") != std::string::npos);
  CHECK(std::string(kStatusCsp).find("http") == std::string::npos);  // no external source
  std::string page;
  append_page_start(page, "t", "/metrics", 10);
  append_page_end(page);
  CHECK(page.find("<script>" + std::string(kStatusScript) + "</script>") != std::string::npos);
  CHECK(test::unexpected_tag(page).empty());
}

TEST_CASE("the stall colour runs viridis from dark to light, clamped", "[status_page_frame]") {
  CHECK(stall_colour(0) == "#440154");
  CHECK(stall_colour(-1) == "#440154");
  CHECK(stall_colour(kStallScaleMax) == "#fde725");
  CHECK(stall_colour(1) == "#fde725");
  CHECK(stall_colour(kStallScaleMax / 2) == "#21918c");
  CHECK_FALSE(stall_colour_is_light(0.05));
  CHECK(stall_colour_is_light(0.45));
}

TEST_CASE("times and numbers as text", "[status_page_frame]") {
  CHECK(utc_time(0).empty());
  CHECK(utc_time(1790000000.5) == "2026-09-21 14:13:20 UTC");
  CHECK(fixed(0.12345, 3) == "0.123");
  CHECK(fixed(1.0 / 0.0, 2) == "0.00");
}

}  // namespace ibfx
