#include "daemon/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

namespace ibfx {
namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
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
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }

LogLevel parse_log_level(std::string_view n) {
  if (n == "debug") return LogLevel::kDebug;
  if (n == "info") return LogLevel::kInfo;
  if (n == "warn") return LogLevel::kWarn;
  if (n == "error") return LogLevel::kError;
  throw std::invalid_argument("unknown log level \"" + std::string(n) + "\"");
}

void log(LogLevel level, std::string_view message) {
  if (level < g_level.load()) return;
  // journald adds its own timestamp; the level prefix lets it map priority.
  std::string line = "level=";
  line += name(level);
  line += " msg=\"";
  for (char c : message) {
    if (c == '"' || c == '\\') line += '\\';
    line += c == '\n' ? ' ' : c;
  }
  line += "\"\n";
  std::lock_guard lock(g_mu);
  std::fputs(line.c_str(), stderr);
}

}  // namespace ibfx
