// Unix seconds as the views print them: "2026-12-03 02:13:00" (UTC,
// seconds truncated). One spelling for /top, the status page and the
// switch view.
#pragma once

#include <string>

namespace ibfx {

// "" for a time that is not positive (unknown, never).
std::string utc_time_text(double unix_seconds);

}  // namespace ibfx
