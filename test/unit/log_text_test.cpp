// The one rule for untrusted text in a log line or an error message
// (base/log_text.h).
#include "base/log_text.h"

#include <catch2/catch.hpp>
#include <string>

using namespace ibfx;

TEST_CASE("printable escapes what is not printable ASCII and cuts long text", "[log_text]") {
  CHECK(printable("plain text") == "plain text");
  CHECK(printable(std::string("a\"b\\c\n\x01\xff", 8)) == "a\\x22b\\x5cc\\x0a\\x01\\xff");
  CHECK(printable(std::string(61, 'x')) == std::string(60, 'x') + "...");
  CHECK(printable(std::string(60, 'x')) == std::string(60, 'x'));
}

TEST_CASE("printable and quote cut where the caller says", "[log_text]") {
  CHECK(printable("abcdef", 3) == "abc...");
  CHECK(quote("abcdef", 3) == "\"abc...\"");
}

TEST_CASE("quote puts printable text in double quotes", "[log_text]") {
  CHECK(quote("k\tv") == "\"k\\x09v\"");
  CHECK(quote("") == "\"\"");
}
