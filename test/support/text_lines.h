// Line checks over a text exposition or a rendered page, shared by the test
// files (a unity batch would otherwise find the same helper twice).
#pragma once

#include <string>

namespace ibfx::test {

// `line` is a whole line of `text` (not the last one: an exposition ends
// with "# EOF" or a newline after its last series).
inline bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace ibfx::test
