// One event per line on stderr. Under systemd (stderr is the journal's
// stream) each line starts with its sd-daemon(3) priority, "<3>", so that
// `journalctl -p err` selects by level, and carries no timestamp (journald
// stamps it); elsewhere each line starts with an RFC 3339 timestamp. The
// format is logfmt ("level=info msg=...") or JSON, as exporter-toolkit's
// --log.format.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace ibfx {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kLogfmt, kJson };

void set_log_level(LogLevel level);
LogLevel parse_log_level(std::string_view name);  // throws std::invalid_argument
void set_log_format(LogFormat format);
LogFormat parse_log_format(std::string_view name);  // throws std::invalid_argument
// Overrides the journald detection (tests).
void set_log_journal(bool journal);

// True when stderr is the stream systemd connected to the journal:
// JOURNAL_STREAM ("<device>:<inode>", systemd.exec(5)) names stderr's file.
// A child process with stderr redirected elsewhere inherits the variable,
// hence the comparison rather than its mere presence.
bool stderr_is_journal();

// One line, newline included: "<6>level=info msg=\"...\"\n" for the journal,
// "ts=2026-01-02T03:04:05.678Z level=info msg=\"...\"\n" elsewhere, or the
// same fields as one JSON object.
std::string format_log_line(LogLevel level, std::string_view message, LogFormat format,
                            bool journal, std::chrono::system_clock::time_point now);

void log(LogLevel level, std::string_view message);
inline void log_debug(std::string_view m) { log(LogLevel::kDebug, m); }
inline void log_info(std::string_view m) { log(LogLevel::kInfo, m); }
inline void log_warn(std::string_view m) { log(LogLevel::kWarn, m); }
inline void log_error(std::string_view m) { log(LogLevel::kError, m); }

}  // namespace ibfx
