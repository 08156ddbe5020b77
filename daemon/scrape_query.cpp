#include "daemon/scrape_query.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>

namespace ibfx {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding; nullopt on a bad escape.
std::optional<std::string> decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = hex_digit(in[i + 1]), lo = hex_digit(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

}  // namespace

ScrapeQuery parse_scrape_query(std::string_view target) {
  ScrapeQuery q;
  const auto mark = target.find('?');
  if (mark == std::string_view::npos) return q;
  std::string_view rest = target.substr(mark + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    const auto key = decode(pair.substr(0, eq));
    const auto value =
        decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (!key || !value) {
      q.error = "malformed %-escape in the query string";
      return q;
    }
    if (*key == "collect[]") {
      q.collect.push_back(*value);
    } else if (*key == "node") {
      q.nodes.push_back(*value);
    } else if (*key == "n") {
      q.n = *value;
    } else if (*key == "since") {
      q.since = *value;
    } else if (*key == "at") {
      q.at = *value;
    } else if (*key == "window") {
      q.window = *value;
    } else if (*key == "job") {
      q.job = *value;
    } else if (*key == "user") {
      q.user = *value;
    } else if (*key == "limit") {
      q.limit = *value;
    } else if (*key == "from") {
      q.from = *value;
    } else if (*key == "to") {
      q.to = *value;
    } else if (*key == "step") {
      q.step = *value;
    } else if (*key == "from_port") {
      q.from_port = *value;
    } else if (*key == "to_port") {
      q.to_port = *value;
    } else if (*key == "format") {
      q.format = *value;
    }
  }
  return q;
}

}  // namespace ibfx
