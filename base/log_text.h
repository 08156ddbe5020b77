// The one rule for untrusted text (a node description, a Slurm answer, a
// child's reason, a value from a file) in a log line or an error message:
// it reaches a terminal or a journal, so it must not be able to forge a
// line, a field or a terminal escape. Bytes outside printable ASCII, '"'
// and '\' become \xNN, and long text is cut.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ibfx {

inline constexpr std::size_t kPrintableMax = 60;

// `text` escaped as above, cut after `max_shown` bytes with "...".
std::string printable(std::string_view text, std::size_t max_shown = kPrintableMax);
// printable() in double quotes.
std::string quote(std::string_view text, std::size_t max_shown = kPrintableMax);

}  // namespace ibfx
