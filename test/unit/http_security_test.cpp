// make_http_security: what the server builds from a web config, per
// connection: no TLS and no auth by default; basic auth from the users;
// the extra headers; a TLS context from a certificate and key that load,
// and a ConfigError naming the file and OpenSSL's reason when they do not.
#include "http/http_security.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "config/config.h"
#include "test/support/base64.h"
#include "test/support/basic_auth_sample.h"
#include "test/support/temp_dir.h"

using namespace ibfx;
using ibfx::test::base64;
using ibfx::test::TempDir;

namespace {

// "prometheus-secret", bcrypt cost 4 (as in web_config_test).
using ibfx::test::kHash;

std::string security_error(const WebConfig& web) {
  try {
    make_http_security(web);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("make_http_security: plain HTTP without auth by default", "[http_security]") {
  const auto security = make_http_security(WebConfig{});
  REQUIRE(security != nullptr);
  CHECK(security->tls == nullptr);
  CHECK(security->authenticator == nullptr);
  CHECK(security->headers.empty());
}

TEST_CASE("make_http_security: basic auth from the users, and the extra headers",
          "[http_security]") {
  WebConfig web;
  web.basic_auth_users["prometheus"] = kHash;
  web.headers = {{"X-Frame-Options", "deny"}, {"Strict-Transport-Security", "max-age=60"}};
  const auto security = make_http_security(web);
  CHECK(security->tls == nullptr);
  REQUIRE(security->authenticator != nullptr);
  CHECK(security->authenticator->check_header("Basic " + base64("prometheus:prometheus-secret")));
  CHECK_FALSE(security->authenticator->check_header("Basic " + base64("prometheus:wrong")));
  CHECK(security->headers == web.headers);
}

TEST_CASE("make_http_security loads the TLS certificate and key, or names what failed",
          "[http_security]") {
  TempDir dir;
  const std::string command =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "-subj /CN=localhost -keyout " +
      dir.path() + "/tls.key -out " + dir.path() + "/tls.crt >/dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  WebConfig web;
  web.tls.emplace();
  web.tls->cert_file = dir.path() + "/tls.crt";
  web.tls->key_file = dir.path() + "/tls.key";
  CHECK(make_http_security(web)->tls != nullptr);

  WebConfig bad = web;
  bad.tls->cert_file = dir.write("junk.crt", "not a certificate\n");
  std::string e = security_error(bad);
  CHECK(e.rfind("tls_server_config: ", 0) == 0);
  CHECK(e.find("junk.crt") != std::string::npos);

  bad = web;
  bad.tls->key_file = dir.path() + "/missing.key";
  e = security_error(bad);
  CHECK(e.rfind("tls_server_config: ", 0) == 0);
  CHECK(e.find("missing.key") != std::string::npos);
}
