#include "http/content_negotiation.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>

namespace ibfx {
namespace {

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parses a qvalue ("0", "0.5", "1.000"); nullopt when malformed.
std::optional<double> parse_qvalue(std::string_view s) {
  s = trim(s);
  double q = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), q);
  if (ec != std::errc() || ptr != s.data() + s.size() || q < 0 || q > 1) return std::nullopt;
  return q;
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
  std::optional<double> gzip_q;
  std::optional<double> any_q;
  while (!accept_encoding.empty()) {
    auto comma = accept_encoding.find(',');
    std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding.remove_prefix(comma == std::string_view::npos ? accept_encoding.size()
                                                                  : comma + 1);
    auto semi = element.find(';');
    std::string coding = ascii_lower(trim(element.substr(0, semi)));
    if (coding.empty()) continue;
    std::optional<double> q = 1.0;
    while (semi != std::string_view::npos) {
      element.remove_prefix(semi + 1);
      semi = element.find(';');
      std::string_view param = trim(element.substr(0, semi));
      auto eq = param.find('=');
      if (eq == std::string_view::npos || ascii_lower(trim(param.substr(0, eq))) != "q") continue;
      q = parse_qvalue(param.substr(eq + 1));
    }
    if (!q) continue;  // an element with a broken qvalue tells us nothing
    if (coding == "gzip" || coding == "x-gzip") {
      gzip_q = std::max(gzip_q.value_or(0.0), *q);
    } else if (coding == "*") {
      any_q = *q;
    }
  }
  // An explicit gzip entry wins over the wildcard (RFC 9110 12.5.3).
  if (gzip_q) return *gzip_q > 0;
  return any_q && *any_q > 0;
}

}  // namespace ibfx
