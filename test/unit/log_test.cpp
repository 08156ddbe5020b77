#include "base/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <stdexcept>
#include <string>

using namespace ibfx;

namespace {
// 2026-01-02T03:04:05.678Z
const std::chrono::system_clock::time_point kNow =
    std::chrono::system_clock::time_point{} + std::chrono::milliseconds(1767323045678);
}  // namespace

TEST_CASE("Log lines for the journal carry the syslog priority and no timestamp", "[log]") {
  CHECK(format_log_line(LogLevel::kError, "bind failed", LogFormat::kLogfmt, true, kNow) ==
        "<3>level=error msg=\"bind failed\"\n");
  CHECK(format_log_line(LogLevel::kWarn, "w", LogFormat::kLogfmt, true, kNow) ==
        "<4>level=warn msg=\"w\"\n");
  CHECK(format_log_line(LogLevel::kInfo, "i", LogFormat::kLogfmt, true, kNow) ==
        "<6>level=info msg=\"i\"\n");
  CHECK(format_log_line(LogLevel::kDebug, "d", LogFormat::kLogfmt, true, kNow) ==
        "<7>level=debug msg=\"d\"\n");
  CHECK(format_log_line(LogLevel::kError, "e", LogFormat::kJson, true, kNow) ==
        "<3>{\"level\":\"error\",\"msg\":\"e\"}\n");
}

TEST_CASE("Log lines elsewhere start with an RFC 3339 UTC timestamp", "[log]") {
  CHECK(format_log_line(LogLevel::kInfo, "listening", LogFormat::kLogfmt, false, kNow) ==
        "ts=2026-01-02T03:04:05.678Z level=info msg=\"listening\"\n");
  CHECK(format_log_line(LogLevel::kWarn, "x", LogFormat::kJson, false, kNow) ==
        "{\"ts\":\"2026-01-02T03:04:05.678Z\",\"level\":\"warn\",\"msg\":\"x\"}\n");
}

TEST_CASE("A message stays on one line and its quotes stay balanced", "[log]") {
  const std::string message = "node \"sw 1\"\nsaid \\ and \x01";
  CHECK(format_log_line(LogLevel::kInfo, message, LogFormat::kLogfmt, true, kNow) ==
        "<6>level=info msg=\"node \\\"sw 1\\\" said \\\\ and \\u0001\"\n");
  CHECK(format_log_line(LogLevel::kInfo, message, LogFormat::kJson, true, kNow) ==
        "<6>{\"level\":\"info\",\"msg\":\"node \\\"sw 1\\\"\\nsaid \\\\ and \\u0001\"}\n");
}

TEST_CASE("Log level and format names parse, others are refused", "[log]") {
  CHECK(parse_log_level("warn") == LogLevel::kWarn);
  CHECK(parse_log_format("logfmt") == LogFormat::kLogfmt);
  CHECK(parse_log_format("json") == LogFormat::kJson);
  CHECK_THROWS_AS(parse_log_format("JSON"), std::invalid_argument);
  CHECK_THROWS_AS(parse_log_level("fatal"), std::invalid_argument);
}

TEST_CASE("stderr is the journal only when JOURNAL_STREAM names it", "[log]") {
  struct stat st {};
  REQUIRE(::fstat(STDERR_FILENO, &st) == 0);
  const std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const char* saved = std::getenv("JOURNAL_STREAM");
  const std::string saved_value = saved != nullptr ? saved : "";

  ::setenv("JOURNAL_STREAM", mine.c_str(), 1);
  CHECK(stderr_is_journal());
  // Inherited by a process whose stderr goes elsewhere: not the journal.
  ::setenv("JOURNAL_STREAM",
           (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1)).c_str(), 1);
  CHECK_FALSE(stderr_is_journal());
  ::setenv("JOURNAL_STREAM", "garbage", 1);
  CHECK_FALSE(stderr_is_journal());
  ::unsetenv("JOURNAL_STREAM");
  CHECK_FALSE(stderr_is_journal());

  if (saved != nullptr) ::setenv("JOURNAL_STREAM", saved_value.c_str(), 1);
}
