#include "http/web_config.h"

#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "config/command_line.h"
#include "config/config.h"
#include "http/http_server.h"
#include "test/support/base64.h"
#include "test/support/basic_auth_sample.h"
#include "test/support/temp_dir.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using ibfx::ConfigError;
using ibfx::parse_web_config;

// bcrypt of "prometheus-secret" at cost 4 (the minimum, to keep tests fast),
// made with crypt_gensalt_rn("$2y$", 4) + crypt_rn.
using ibfx::test::kHash;
using ibfx::test::kPassword;

std::string web_config_error(const std::string& yaml, const std::string& base_dir = "") {
  try {
    parse_web_config(yaml, "web.yml", base_dir);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

using ibfx::test::TempDir;

using ibfx::test::base64;

// One request on a fresh connection; the server runs on its own thread.
http::response<http::string_body> get_with_auth(std::uint16_t port,
                                                const std::string& authorization) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(5));
  stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> req{http::verb::get, "/metrics", 11};
  req.set(http::field::host, "localhost");
  if (!authorization.empty()) req.set(http::field::authorization, authorization);
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  return res;
}

}  // namespace

TEST_CASE("web config: an exporter-toolkit file parses", "[web_config]") {
  TempDir dir;
  dir.write("tls.crt", "x");
  dir.write("tls.key", "x");
  dir.write("ca.crt", "x");
  const std::string path = dir.write("web.yml", std::string(R"(
tls_server_config:
  cert_file: tls.crt
  key_file: )") + dir.path() + R"(/tls.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP256]
http_server_config:
  http2: true
  headers:
    Strict-Transport-Security: max-age=31536000
    X-Frame-Options: deny
basic_auth_users:
  prometheus: )" + kHash + "\n");
  const ibfx::WebConfig web = ibfx::load_web_config(path);
  REQUIRE(web.tls);
  // Relative paths are relative to the web config file.
  CHECK(web.tls->cert_file == dir.path() + "/tls.crt");
  CHECK(web.tls->key_file == dir.path() + "/tls.key");
  CHECK(web.tls->client_ca_file == dir.path() + "/ca.crt");
  CHECK(web.tls->client_auth == ibfx::ClientAuth::kRequireAndVerifyClientCert);
  CHECK(web.tls->min_version == ibfx::TlsVersion::kTls13);
  CHECK(web.tls->cipher_suites == std::vector<std::string>{"ECDHE-RSA-AES128-GCM-SHA256"});
  CHECK(web.tls->curve_preferences == std::vector<std::string>{"X25519", "P-256"});
  CHECK(web.headers.size() == 2);
  CHECK(web.basic_auth_users.at("prometheus") == kHash);
}

TEST_CASE("web config: empty file or TLS section without files means plain HTTP", "[web_config]") {
  CHECK_FALSE(parse_web_config("", "web.yml").tls);
  CHECK_FALSE(parse_web_config("tls_server_config: {}\n", "web.yml").tls);
  CHECK(parse_web_config("basic_auth_users: {}\n", "web.yml").basic_auth_users.empty());
}

TEST_CASE("web config: errors name file, line and key", "[web_config]") {
  CHECK(web_config_error("tls_server_config:\n  cert_file: /nonexistent/x.crt\n") ==
        "web.yml:2: tls_server_config.cert_file: cannot read /nonexistent/x.crt: No such file or "
        "directory");
  CHECK(web_config_error("basic_auth_users:\n  alice: hunter2\n")
            .rfind("web.yml:2: basic_auth_users.alice: expected a bcrypt hash", 0) == 0);
  CHECK(web_config_error("rate_limit: {}\n").rfind("web.yml:1: rate_limit: unknown key", 0) == 0);
  CHECK(web_config_error("tls_server_config:\n  min_version: TLS14\n")
            .rfind("web.yml:2: tls_server_config.min_version: unknown value \"TLS14\"", 0) == 0);
  CHECK(
      web_config_error("tls_server_config:\n  client_allowed_sans: [a]\n").find("not supported") !=
      std::string::npos);
  CHECK(web_config_error("http_server_config:\n  headers:\n    Content-Type: text/html\n")
            .rfind("web.yml:3: http_server_config.headers.Content-Type: header not allowed", 0) ==
        0);
  CHECK(web_config_error("tls_server_config: [1]\n") ==
        "web.yml:1: tls_server_config: tls_server_config must be a mapping");
  CHECK(web_config_error("a: [\n").rfind("web.yml:", 0) == 0);

  TempDir dir;
  const std::string crt = dir.write("c", "x");
  CHECK(web_config_error("tls_server_config:\n  cert_file: " + crt + "\n") ==
        "web.yml:2: tls_server_config: missing key_file");
  CHECK(web_config_error("tls_server_config:\n  cert_file: " + crt + "\n  key_file: " + crt +
                         "\n  client_ca_file: " + crt + "\n") ==
        "web.yml:2: tls_server_config: client_ca_file is set but client_auth_type is NoClientCert");
  CHECK(web_config_error("tls_server_config:\n  cert_file: " + crt + "\n  key_file: " + crt +
                         "\n  client_auth_type: VerifyClientCertIfGiven\n") ==
        "web.yml:2: tls_server_config: client_auth_type verifies client certificates: set "
        "client_ca_file");
}

TEST_CASE("web config: --check-config style loading of bad TLS files fails cleanly",
          "[web_config]") {
  TempDir dir;
  ibfx::WebConfig web;
  web.tls.emplace();
  web.tls->cert_file = dir.write("tls.crt", "not a certificate");
  web.tls->key_file = dir.write("tls.key", "not a key");
  try {
    ibfx::check_web_config(web);
    FAIL("accepted a garbage certificate");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).rfind("tls_server_config: cert_file " + web.tls->cert_file, 0) ==
          0);
  }
  asio::io_context io;
  CHECK_THROWS_AS(ibfx::HttpServer(io, "127.0.0.1:0", {}, {}, web), ConfigError);
}

TEST_CASE("HttpServer with basic auth answers 401 without valid credentials", "[web_config]") {
  ibfx::WebConfig web;
  web.basic_auth_users["prometheus"] = kHash;
  web.headers.emplace_back("X-Content-Type-Options", "nosniff");
  asio::io_context io;
  ibfx::HttpServer server(
      io, "127.0.0.1:0",
      [](const ibfx::HttpRequest&) {
        return ibfx::HttpResponse{200, "text/plain", "metrics\n"};
      },
      {}, web);
  std::thread thread([&io] { io.run(); });

  const auto none = get_with_auth(server.port(), "");
  CHECK(none.result_int() == 401);
  CHECK(none[http::field::www_authenticate] == "Basic realm=\"ibfabric_exporter\"");
  CHECK(none["X-Content-Type-Options"] == "nosniff");
  CHECK(get_with_auth(server.port(), "Basic " + base64("prometheus:wrong")).result_int() == 401);
  const auto ok =
      get_with_auth(server.port(), "Basic " + base64(std::string("prometheus:") + kPassword));
  CHECK(ok.result_int() == 200);
  CHECK(ok.body() == "metrics\n");
  CHECK(ok[http::field::www_authenticate].empty());
  CHECK(ok["X-Content-Type-Options"] == "nosniff");

  // A reload to a configuration without users applies to new connections.
  server.set_web_config({});
  CHECK(get_with_auth(server.port(), "").result_int() == 200);

  server.stop();
  thread.join();
}

TEST_CASE("command line: --web.config.file is passed through", "[web_config]") {
  const char* argv[] = {"ibfabric_exporter", "--web.config.file=/etc/ibfabric_exporter/web.yml"};
  CHECK(ibfx::parse_command_line(2, argv).web_config_file == "/etc/ibfabric_exporter/web.yml");
  const char* none[] = {"ibfabric_exporter"};
  CHECK(ibfx::parse_command_line(1, none).web_config_file.empty());
  CHECK(ibfx::usage_text().find("--web.config.file=PATH") != std::string::npos);
}
