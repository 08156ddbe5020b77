#include "http/basic_auth.h"

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>

#include "test/support/base64.h"
#include "test/support/basic_auth_sample.h"

namespace {

// bcrypt of "prometheus-secret" at cost 4 (the minimum, to keep tests fast),
// made with crypt_gensalt_rn("$2y$", 4) + crypt_rn.
using ibfx::test::base64;
using ibfx::test::kHash;
using ibfx::test::kPassword;

}  // namespace

TEST_CASE("bcrypt_verify checks $2a$/$2b$/$2y$ hashes", "[basic_auth]") {
  CHECK(ibfx::bcrypt_verify(kPassword, kHash));
  CHECK_FALSE(ibfx::bcrypt_verify("prometheus-secreT", kHash));
  CHECK_FALSE(ibfx::bcrypt_verify("", kHash));
  std::string b = kHash;
  b[2] = 'b';  // $2b$ is the same algorithm
  CHECK(ibfx::bcrypt_verify(kPassword, b));
  CHECK_FALSE(ibfx::bcrypt_verify(kPassword, "$1$abc$def"));
  CHECK_FALSE(ibfx::bcrypt_verify(kPassword, std::string(kHash).substr(0, 59)));
  CHECK_FALSE(ibfx::bcrypt_verify(std::string("prometheus-secret\0x", 19), kHash));
}

TEST_CASE("BasicAuthenticator decodes headers and caches successes", "[basic_auth]") {
  ibfx::BasicAuthenticator auth(std::map<std::string, std::string>{{"prometheus", kHash}});
  const std::string good = "Basic " + base64(std::string("prometheus:") + kPassword);
  CHECK(auth.check_header(good));
  CHECK(auth.check_header(good));  // from the cache
  CHECK(auth.check_header("basic  " + base64(std::string("prometheus:") + kPassword) + " "));
  CHECK_FALSE(auth.check_header("Basic " + base64("prometheus:wrong")));
  CHECK_FALSE(auth.check_header("Basic " + base64(std::string("nobody:") + kPassword)));
  CHECK_FALSE(auth.check_header("Basic " + base64("no-colon")));
  CHECK_FALSE(auth.check_header("Bearer abc"));
  CHECK_FALSE(auth.check_header("Basic !!!"));
  CHECK_FALSE(auth.check_header(""));
  // A password containing ':' splits at the first colon, as RFC 7617 says.
  CHECK(ibfx::base64_decode("YTpiOmM=") == std::optional<std::string>("a:b:c"));
  CHECK(ibfx::base64_decode("YTpiOmM") == std::optional<std::string>("a:b:c"));
  CHECK_FALSE(ibfx::base64_decode("Y"));
}

TEST_CASE("base64_decode takes RFC 4648 text with or without padding", "[basic_auth]") {
  const std::string binary("\xff\x00\x10", 3);
  for (const std::string& plain :
       {std::string(), std::string("a"), std::string("ab"), std::string("abc"), std::string("abcd"),
        std::string("prometheus:secret"), binary}) {
    INFO("plain: " << plain);
    const std::string encoded = base64(plain);
    CHECK(ibfx::base64_decode(encoded) == std::optional<std::string>(plain));
    std::string unpadded = encoded;
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    CHECK(ibfx::base64_decode(unpadded) == std::optional<std::string>(plain));
  }
  // Characters outside the alphabet, padding inside, whitespace inside.
  for (const char* bad : {"YW=J", "Y W J j", "YWJj!", "YWJj\n", "-_-_", "Y"}) {
    INFO("encoded: " << bad);
    CHECK_FALSE(ibfx::base64_decode(bad));
  }
}
