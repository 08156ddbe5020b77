#include "views/web_escape.h"

#include <cstdint>

namespace ibfx {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Calls `emit(code_point, bytes)` for each scalar value of `text`, with
// U+FFFD (and its own bytes) for each ill-formed sequence (Unicode 15,
// table 3-7: the well-formed byte sequences; one replacement per maximal
// ill-formed subpart).
template <typename Emit>
void for_each_code_point(std::string_view text, Emit&& emit) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    if (b0 < 0x80) {
      emit(static_cast<char32_t>(b0), text.substr(i, 1));
      ++i;
      continue;
    }
    int length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    char32_t cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      length = 2;
      cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      length = 3;
      cp = b0 & 0x0F;
      if (b0 == 0xE0) low = 0xA0;   // no overlong forms
      if (b0 == 0xED) high = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      length = 4;
      cp = b0 & 0x07;
      if (b0 == 0xF0) low = 0x90;   // no overlong forms
      if (b0 == 0xF4) high = 0x8F;  // nothing above U+10FFFF
    }
    if (length == 0) {
      emit(U'\uFFFD', kReplacement);
      ++i;
      continue;
    }
    std::size_t k = 1;
    for (; k < static_cast<std::size_t>(length); ++k) {
      if (i + k >= n) break;
      const auto b = static_cast<unsigned char>(text[i + k]);
      const unsigned char lo = k == 1 ? low : 0x80;
      const unsigned char hi = k == 1 ? high : 0xBF;
      if (b < lo || b > hi) break;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (k == static_cast<std::size_t>(length)) {
      emit(cp, text.substr(i, k));
    } else {
      emit(U'\uFFFD', kReplacement);
    }
    i += k;
  }
}

// Code points HTML calls "noncharacters" or controls other than the
// whitespace it allows in text (HTML Standard 13.1.4, "Text").
bool forbidden_in_html(char32_t cp) {
  if (cp < 0x20) return cp != '\t' && cp != '\n' && cp != '\r';
  if (cp >= 0x7F && cp <= 0x9F) return true;
  if (cp >= 0xFDD0 && cp <= 0xFDEF) return true;
  return (cp & 0xFFFE) == 0xFFFE;
}

constexpr char kHex[] = "0123456789ABCDEF";

}  // namespace

void append_html(std::string& out, std::string_view text) {
  for_each_code_point(text, [&out](char32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (forbidden_in_html(cp)) {
          out += kReplacement;
        } else {
          out += bytes;
        }
    }
  });
}

std::string html_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_html(out, text);
  return out;
}

void append_json(std::string& out, std::string_view text) {
  char32_t previous = 0;
  for_each_code_point(text, [&](char32_t cp, std::string_view bytes) {
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '/':
        out += previous == '<' ? "\\/" : "/";
        break;
      default:
        if (cp < 0x20 || cp == 0x7F || cp == 0x2028 || cp == 0x2029) {
          // U+2028/9: valid JSON, but line terminators to pre-2019 JavaScript.
          const auto v = static_cast<std::uint32_t>(cp);
          out += "\\u";
          out += kHex[(v >> 12) & 0xF];
          out += kHex[(v >> 8) & 0xF];
          out += kHex[(v >> 4) & 0xF];
          out += kHex[v & 0xF];
        } else {
          out += bytes;
        }
    }
    previous = cp;
  });
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  append_json(out, text);
  out += '"';
}

void append_url_component(std::string& out, std::string_view text) {
  // Raw bytes, not code points: the name must survive the round trip through
  // the query string byte for byte (the server compares it with the node's
  // name as stored), even when it is not valid UTF-8.
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_code_point(text, [&out](char32_t, std::string_view bytes) { out += bytes; });
  return out;
}

}  // namespace ibfx
