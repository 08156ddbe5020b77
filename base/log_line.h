// A log line decided on by code that does not log it itself, so that a
// test can read what it would say (SmGuardTracker, SweepTroubleLog).
#pragma once

#include <string>

#include "base/log.h"

namespace ibfx {

struct LogLine {
  LogLevel level = LogLevel::kInfo;
  std::string text;
  friend bool operator==(const LogLine&, const LogLine&) = default;
};

inline void log(const LogLine& line) { log(line.level, line.text); }

}  // namespace ibfx
