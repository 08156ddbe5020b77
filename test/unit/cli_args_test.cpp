#include "test/sim/cli_args.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

using ibfx::test::ArgReader;
using ibfx::test::UsageError;

// Reads `args` the way the test tools do (--name VALUE, --count N in
// [1, 10], --seed N >= 0, --speed X > 0, --flag) and returns what was read,
// or the UsageError's message.
std::string read(std::vector<std::string_view> args) {
  ArgReader reader(std::move(args));
  std::string out;
  try {
    while (reader.next()) {
      if (reader.is("--name")) {
        out += "name=" + reader.value() + ";";
      } else if (reader.is("--count")) {
        out += "count=" + std::to_string(reader.integer(1, 10)) + ";";
      } else if (reader.is("--seed")) {
        out += "seed=" + std::to_string(reader.integer(0, INT64_MAX)) + ";";
      } else if (reader.is("--speed")) {
        out += "speed=" + std::to_string(reader.positive_number()) + ";";
      } else if (reader.is("--flag")) {
        reader.no_value();
        out += "flag;";
      } else {
        reader.unknown();
      }
    }
  } catch (const UsageError& e) {
    return e.what();
  }
  return out;
}

}  // namespace

TEST_CASE("ArgReader: both value spellings, switches, and argv", "[cli]") {
  CHECK(read({}).empty());
  CHECK(read({"--name", "a", "--name=b", "--flag", "--count=3", "--count", "10"}) ==
        "name=a;name=b;flag;count=3;count=10;");
  CHECK(read({"--name="}) == "name=;");            // an explicit empty value
  CHECK(read({"--name", "-"}) == "name=-;");       // "-" (stdout) is a value
  CHECK(read({"--name=--flag"}) == "name=--flag;");  // after '=' anything goes
  CHECK(read({"--speed", "0.5"}) == "speed=0.500000;");

  const char* argv[] = {"tool", "--name", "x", "--flag", nullptr};
  ArgReader reader(4, argv);
  REQUIRE(reader.next());
  CHECK(reader.name() == "--name");
  CHECK(reader.value() == "x");
  REQUIRE(reader.next());
  CHECK(reader.is("--flag"));
  CHECK_FALSE(reader.next());
}

TEST_CASE("ArgReader: unknown and missing options are clear errors", "[cli]") {
  CHECK(read({"--bogus"}) == "unknown argument \"--bogus\"");
  CHECK(read({"--bogus=1"}) == "unknown argument \"--bogus=1\"");
  CHECK(read({"stray"}) == "unknown argument \"stray\"");
  CHECK(read({"--name"}) == "--name: missing value");
  // The next option is not eaten as the value.
  CHECK(read({"--name", "--flag"}) == "--name: missing value");
  CHECK(read({"--count"}) == "--count: missing value");
  CHECK(read({"--flag=yes"}) == "--flag takes no value");
}

TEST_CASE("ArgReader: numbers are checked whole and in range", "[cli]") {
  CHECK(read({"--count", "x"}) == "--count: not an integer: \"x\"");
  CHECK(read({"--count", "3x"}) == "--count: not an integer: \"3x\"");
  CHECK(read({"--count", ""}) == "--count: not an integer: \"\"");
  CHECK(read({"--count", "0"}) == "--count: 0 out of range [1, 10]");
  CHECK(read({"--count=11"}) == "--count: 11 out of range [1, 10]");
  CHECK(read({"--seed", "-1"}) == "--seed: -1 is below 0");
  CHECK(read({"--seed", "99999999999999999999"}) ==
        "--seed: not an integer: \"99999999999999999999\"");
  CHECK(read({"--speed", "0"}) == "--speed: not a positive number: \"0\"");
  CHECK(read({"--speed", "-2"}) == "--speed: not a positive number: \"-2\"");
  CHECK(read({"--speed", "inf"}) == "--speed: not a positive number: \"inf\"");
  CHECK(read({"--speed", "nan"}) == "--speed: not a positive number: \"nan\"");
  CHECK(read({"--speed", "2x"}) == "--speed: not a positive number: \"2x\"");
}
