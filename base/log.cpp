#include "base/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <string>

namespace ibfx {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::atomic<LogFormat> g_format{LogFormat::kLogfmt};
// -1: not decided yet (stderr_is_journal() on the first line).
std::atomic<int> g_journal{-1};
std::mutex g_mu;

const char* name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

// sd-daemon(3) / syslog(3) priorities: LOG_DEBUG 7, LOG_INFO 6,
// LOG_WARNING 4, LOG_ERR 3.
char priority(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return '7';
    case LogLevel::kInfo:
      return '6';
    case LogLevel::kWarn:
      return '4';
    case LogLevel::kError:
      return '3';
  }
  return '6';
}

// RFC 3339 in UTC with milliseconds, as go-kit's DefaultTimestampUTC.
std::string timestamp(std::chrono::system_clock::time_point now) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms.count() % 1000));
  return text;
}

// A quoted string for either format: a message stays one line, whatever it
// holds (a file name, a peer's node description).
void append_quoted(std::string& out, std::string_view s, LogFormat format) {
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += format == LogFormat::kJson ? "\\n" : " ";
    } else if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

void set_log_level(LogLevel level) { g_level = level; }
void set_log_format(LogFormat format) { g_format = format; }
void set_log_journal(bool journal) { g_journal = journal ? 1 : 0; }

LogLevel parse_log_level(std::string_view n) {
  if (n == "debug") return LogLevel::kDebug;
  if (n == "info") return LogLevel::kInfo;
  if (n == "warn") return LogLevel::kWarn;
  if (n == "error") return LogLevel::kError;
  throw std::invalid_argument("unknown log level \"" + std::string(n) + "\"");
}

LogFormat parse_log_format(std::string_view n) {
  if (n == "logfmt") return LogFormat::kLogfmt;
  if (n == "json") return LogFormat::kJson;
  throw std::invalid_argument("unknown log format \"" + std::string(n) + "\"");
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  std::uintmax_t device = 0;
  std::uintmax_t inode = 0;
  if (std::sscanf(stream, "%" SCNuMAX ":%" SCNuMAX, &device, &inode) != 2) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<std::uintmax_t>(st.st_dev) == device &&
         static_cast<std::uintmax_t>(st.st_ino) == inode;
}

std::string format_log_line(LogLevel level, std::string_view message, LogFormat format,
                            bool journal, std::chrono::system_clock::time_point now) {
  std::string line;
  if (journal) {
    line += '<';
    line += priority(level);
    line += '>';
  }
  if (format == LogFormat::kJson) {
    line += '{';
    if (!journal) line += "\"ts\":\"" + timestamp(now) + "\",";
    line += "\"level\":\"";
    line += name(level);
    line += "\",\"msg\":";
    append_quoted(line, message, format);
    line += "}\n";
    return line;
  }
  if (!journal) line += "ts=" + timestamp(now) + " ";
  line += "level=";
  line += name(level);
  line += " msg=";
  append_quoted(line, message, format);
  line += '\n';
  return line;
}

void log(LogLevel level, std::string_view message) {
  if (level < g_level.load()) return;
  int journal = g_journal.load();
  if (journal < 0) {
    journal = stderr_is_journal() ? 1 : 0;
    g_journal = journal;
  }
  const std::string line = format_log_line(level, message, g_format.load(), journal == 1,
                                           std::chrono::system_clock::now());
  std::lock_guard lock(g_mu);
  std::fputs(line.c_str(), stderr);
}

}  // namespace ibfx
