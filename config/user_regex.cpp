#include "config/user_regex.h"

#include <algorithm>
#include <string_view>

#include "base/log_text.h"

namespace ibfx {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads the decimal number at p[i...], saturating at kMaxUserRegexRepeat + 1
// so that no count, however long, overflows here either.
long read_number(std::string_view p, std::size_t& i) {
  long v = 0;
  while (i < p.size() && is_digit(p[i])) {
    if (v <= kMaxUserRegexRepeat) v = v * 10 + (p[i] - '0');
    ++i;
  }
  return v;
}

// The first limit the pattern breaks, or empty. It only looks for numbers
// std::regex would parse as counts ({m}, {m,}, {m,n}) or backreferences
// (\N); digits anywhere else are literals and stay allowed (gpu-12345).
std::string limit_broken(std::string_view p) {
  if (p.size() > kMaxUserRegexBytes) {
    return "longer than " + std::to_string(kMaxUserRegexBytes) + " bytes";
  }
  bool in_class = false;
  long product = 1;
  for (std::size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
      if (i < p.size() && is_digit(p[i]) && p[i] != '0') {
        if (read_number(p, i) > kMaxUserRegexRepeat) return "backreference number too large";
      } else if (i < p.size()) {
        ++i;
      }
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      ++i;
      continue;
    }
    if (c == '[') {
      in_class = true;
      ++i;
      continue;
    }
    if (c == '{') {
      // {m}, {m,} or {m,n}: the atom is copied max(m, n) times (at least
      // once for {0} and {0,}).
      ++i;
      long count = 1;
      for (;;) {
        if (i < p.size() && is_digit(p[i])) count = std::max(count, read_number(p, i));
        if (i < p.size() && p[i] == ',') {
          ++i;
          continue;
        }
        break;
      }
      product *= count;  // both factors <= kMaxUserRegexRepeat + 1: no overflow
      if (product > kMaxUserRegexRepeat) {
        return "repetition counts multiply to more than " + std::to_string(kMaxUserRegexRepeat);
      }
      continue;
    }
    ++i;
  }
  return {};
}

}  // namespace

std::regex compile_user_regex(const std::string& pattern) {
  if (const std::string why = limit_broken(pattern); !why.empty()) {
    throw UserRegexError("invalid regular expression " + quote(pattern) + ": " + why);
  }
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UserRegexError("invalid regular expression " + quote(pattern) + ": " + e.what());
  }
}

}  // namespace ibfx
