// One event per line with a level, for journald: "level=info msg=..."
#pragma once

#include <string>
#include <string_view>

namespace ibfx {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
void set_log_level(LogLevel level);
LogLevel parse_log_level(std::string_view name);  // throws std::invalid_argument
void log(LogLevel level, std::string_view message);
inline void log_debug(std::string_view m) { log(LogLevel::kDebug, m); }
inline void log_info(std::string_view m) { log(LogLevel::kInfo, m); }
inline void log_warn(std::string_view m) { log(LogLevel::kWarn, m); }
inline void log_error(std::string_view m) { log(LogLevel::kError, m); }

}  // namespace ibfx
