// compile_user_regex (config/user_regex.h): the operator's patterns compile
// as ECMAScript, and counts that would make std::regex overflow or build a
// huge automaton are refused with a clear reason before it sees them.
#include "config/user_regex.h"

#include <catch2/catch.hpp>
#include <string>

#include "analysis/analysis_config.h"
#include "config/config_error.h"

using namespace ibfx;

namespace {

std::string user_regex_error(const std::string& pattern) {
  try {
    (void)compile_user_regex(pattern);
  } catch (const UserRegexError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("compile_user_regex compiles the patterns operators write", "[user_regex]") {
  const std::regex rail = compile_user_regex(R"(^(\S+) mlx5_(\d+)$)");
  std::smatch m;
  const std::string description = "gpu-00012 mlx5_3";
  REQUIRE(std::regex_search(description, m, rail));
  CHECK(m[2].str() == "3");
  // Literal digit runs and counts well under the limit are fine.
  CHECK(user_regex_error(R"(^leaf-su\d{3}-r[0-9]{1,2}$)") == "<no error>");
  CHECK(user_regex_error("gpu-123456789012345") == "<no error>");
  CHECK(user_regex_error(R"((a)\1)") == "<no error>");
  CHECK(user_regex_error("x{1000}") == "<no error>");
  CHECK(user_regex_error("[{99999999999}]") == "<no error>");  // braces in a class are literal
}

TEST_CASE("compile_user_regex refuses counts std::regex cannot take safely", "[user_regex]") {
  // The fuzzer's find: libstdc++ multiplies this into a signed long.
  CHECK(user_regex_error("a{5555555555555555555}") ==
        "invalid regular expression \"a{5555555555555555555}\": repetition counts multiply to "
        "more than 1000");
  CHECK(user_regex_error("a{2,5555555555555555555}").find("multiply to more than 1000") !=
        std::string::npos);
  CHECK(user_regex_error("a{1001}").find("multiply to more than 1000") != std::string::npos);
  // Nested counts multiply: a million NFA states from 15 bytes.
  CHECK(user_regex_error("(a{100}){100}").find("multiply to more than 1000") != std::string::npos);
  CHECK(user_regex_error(R"((a)\5555555555555555555)").find("backreference number too large") !=
        std::string::npos);
  CHECK(user_regex_error(std::string(kMaxUserRegexBytes + 1, 'a')).find("longer than 256 bytes") !=
        std::string::npos);
  // What std::regex itself rejects keeps its reason.
  CHECK(user_regex_error("(unclosed").rfind("invalid regular expression \"(unclosed\": ", 0) == 0);
}

TEST_CASE("A config pattern over the limits is a config error at its line", "[user_regex]") {
  try {
    (void)parse_analysis_config("topology:\n  rail_regex: 'a{5555555555555555555}'\n", "cfg");
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("cfg:2") != std::string::npos);
    CHECK(what.find("multiply to more than 1000") != std::string::npos);
  }
}
