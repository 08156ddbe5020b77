// parse_listen_address: the one parser of "[host]:port", for the config
// file, the --web.listen-address flag and the HTTP server's bind.
#include "config/listen_address.h"

#include <catch2/catch.hpp>
#include <string>

#include "config/config.h"

using namespace ibfx;

namespace {

std::string listen_error(std::string_view text) {
  try {
    parse_listen_address(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("parse_listen_address takes host:port, :port, *:port and [v6]:port", "[listen_address]") {
  ListenAddress a = parse_listen_address(":9690");
  CHECK(a.host.empty());
  CHECK(a.port == 9690);
  a = parse_listen_address("*:0");  // all interfaces, any free port
  CHECK(a.host.empty());
  CHECK(a.port == 0);
  a = parse_listen_address("127.0.0.1:65535");
  CHECK(a.host == "127.0.0.1");
  CHECK(a.port == 65535);
  a = parse_listen_address("localhost:9100");
  CHECK(a.host == "localhost");
  a = parse_listen_address("[::1]:9690");
  CHECK(a.host == "::1");
  CHECK(a.port == 9690);
  a = parse_listen_address("[fe80::1%eth0]:80");
  CHECK(a.host == "fe80::1%eth0");
  a = parse_listen_address("[]:1");  // brackets around nothing: all interfaces
  CHECK(a.host.empty());
}

TEST_CASE("parse_listen_address refuses what is not [host]:port, quoting it", "[listen_address]") {
  const std::string expected =
      "expected [host]:port such as \":9690\", \"127.0.0.1:9690\" or \"[::1]:9690\", got ";
  CHECK(listen_error("9690") == expected + "\"9690\"");
  CHECK(listen_error("host:") == expected + "\"host:\"");
  CHECK(listen_error(":65536") == expected + "\":65536\"");
  CHECK(listen_error(":-1") == expected + "\":-1\"");
  CHECK(listen_error(":80x") == expected + "\":80x\"");
  CHECK(listen_error("::1:9690") == expected + "\"::1:9690\"");  // v6 needs brackets
  CHECK(listen_error("[::1]9690") == expected + "\"[::1]9690\"");
  CHECK(listen_error("[::1:9690") == expected + "\"[::1:9690\"");
  CHECK(listen_error("a\"b:1\n") == expected + "\"a\\x22b:1\\x0a\"");  // escaped
}
