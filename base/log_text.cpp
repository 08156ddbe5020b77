#include "base/log_text.h"

namespace ibfx {

std::string printable(std::string_view text, std::size_t max_shown) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max_shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return text.size() > max_shown ? out + "..." : out;
}

std::string quote(std::string_view text, std::size_t max_shown) {
  return "\"" + printable(text, max_shown) + "\"";
}

}  // namespace ibfx
