#include "config/node_name_map.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "config/config.h"

namespace {

const std::string kNameMapDir = IBFX_SOURCE_DIR "/test/data/config/";

std::string name_map_error(const std::string& text) {
  try {
    ibfx::parse_node_name_map(text, "map");
  } catch (const ibfx::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("node-name-map: comments, blank lines, spacing and GUID forms", "[node_name_map]") {
  const ibfx::NodeNameMap names = ibfx::load_node_name_map(kNameMapDir + "node_name_map.txt");
  CHECK(names.size() == 5);
  CHECK(names.at(0x0002c90300a1b2c3) == "leaf01");
  CHECK(names.at(0x0002c90300a1b2c4) == "leaf02 (rack 7)");  // upper-case hex, trailing comment
  CHECK(names.at(0x1234567890abcdf0) == "spine01");          // decimal GUID
  CHECK(names.at(0xff) == "host #255");                      // '#' inside the quotes, CRLF
  CHECK(names.at(0x10) == "tight");                          // no space, no final newline
}

TEST_CASE("node-name-map: empty input", "[node_name_map]") {
  CHECK(ibfx::parse_node_name_map("", "map").empty());
  CHECK(ibfx::parse_node_name_map("\n\n# only a comment\n   \n", "map").empty());
  CHECK(ibfx::parse_node_name_map("0xffffffffffffffff \"max\"", "map").at(~0ULL) == "max");
}

TEST_CASE("node-name-map: malformed lines name the line", "[node_name_map]") {
  const std::string guid_error =
      "\": expected 0x and up to 16 hex digits, or a decimal without leading zeros";
  CHECK(name_map_error("# c\n\n0x1 \"a\"\nzz \"b\"\n") == "map:4: invalid GUID \"zz" + guid_error);
  CHECK(name_map_error("0x \"a\"\n") == "map:1: invalid GUID \"0x" + guid_error);
  CHECK(name_map_error("0x1g \"a\"\n") == "map:1: invalid GUID \"0x1g" + guid_error);
  CHECK(name_map_error("0x10000000000000000 \"a\"\n") ==
        "map:1: invalid GUID \"0x10000000000000000" + guid_error);
  CHECK(name_map_error("0123 \"a\"\n") == "map:1: invalid GUID \"0123" + guid_error);  // octal in C
  CHECK(name_map_error("0 \"a\"\n") == "map:1: invalid GUID \"0" + guid_error);
  CHECK(name_map_error("-1 \"a\"\n") == "map:1: invalid GUID \"-1" + guid_error);
  CHECK(name_map_error("\"a\"\n") == "map:1: invalid GUID \"" + guid_error);
  CHECK(name_map_error("0x1\n") == "map:1: expected a double-quoted node name after the GUID");
  CHECK(name_map_error("0x1 leaf01\n") ==
        "map:1: expected a double-quoted node name after the GUID");
  CHECK(name_map_error("0x1 \"leaf01\n0x2 \"b\"\n") ==
        "map:1: missing closing quote on the node name");
  CHECK(name_map_error("0x1 \"\"\n") == "map:1: empty node name");
  CHECK(name_map_error("0x1 \"a\tb\"\n") == "map:1: control character in the node name");
  CHECK(name_map_error("0x1 \"a\" b\n") == "map:1: unexpected text after the node name");
  CHECK(name_map_error("0x1 \"a\"\"b\"\n") == "map:1: unexpected text after the node name");
  CHECK(name_map_error(std::string("0x1\0 \"a\"\n", 9)) ==
        "map:1: invalid GUID \"0x1?" + guid_error);
}

TEST_CASE("node-name-map: a duplicate GUID names both lines", "[node_name_map]") {
  CHECK(name_map_error("0x1 \"a\"\n# c\n0x2 \"b\"\n0x0000000000000001 \"a\"\n") ==
        "map:4: duplicate GUID 0x0000000000000001 (first named on line 1)");
  CHECK(name_map_error("0xff \"a\"\n255 \"b\"\n") ==
        "map:2: duplicate GUID 0x00000000000000ff (first named on line 1)");
}

TEST_CASE("node-name-map: unreadable file", "[node_name_map]") {
  CHECK_THROWS_WITH(ibfx::load_node_name_map("/nonexistent/map"),
                    "/nonexistent/map: cannot read: No such file or directory");
}

TEST_CASE("node-name-map: large and garbage input", "[node_name_map]") {
  std::string big;
  for (std::uint64_t guid = 1; guid <= 50000; ++guid) {
    big += "0x" + std::to_string(guid) + " \"node " + std::to_string(guid) + "\"\n";
  }
  CHECK(ibfx::parse_node_name_map(big, "big").size() == 50000);

  std::mt19937 rng(7);
  std::string garbage(1 << 20, '\0');
  for (char& c : garbage) c = static_cast<char>(rng() % 256);
  CHECK_THROWS_AS(ibfx::parse_node_name_map(garbage, "garbage"), ibfx::ConfigError);
  CHECK_THROWS_AS(ibfx::parse_node_name_map(std::string(1 << 20, '"'), "garbage"),
                  ibfx::ConfigError);
  CHECK(ibfx::parse_node_name_map(std::string(1 << 20, '\n'), "blank").empty());
}
