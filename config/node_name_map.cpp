// The infiniband-diags node-name-map: one `<guid> "<name>"` per line.
#include "config/node_name_map.h"

#include <array>
#include <charconv>
#include <optional>

#include "config/config_error.h"
#include "config/text_file.h"

namespace ibfx {
namespace {

// Large fabrics have ~100k nodes at ~60 bytes a line; this leaves ample room.
constexpr std::size_t kMaxNodeNameMapBytes = 64 << 20;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view skip_space(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

// infiniband-diags reads the GUID with strtoull(base 0). We take its hex and
// decimal forms but refuse a leading 0 on a decimal, which strtoull would
// silently read as octal.
std::optional<std::uint64_t> parse_guid(std::string_view token) {
  int base = 10;
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
    token.remove_prefix(2);
    base = 16;
  } else if (token.size() > 1 && token[0] == '0') {
    return std::nullopt;
  }
  std::uint64_t guid = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, guid, base);
  if (token.empty() || ptr != end || ec != std::errc() || guid == 0) return std::nullopt;
  return guid;
}

std::string hex_guid(std::uint64_t guid) {
  std::array<char, 16> buf{};
  const auto result = std::to_chars(buf.data(), buf.data() + buf.size(), guid, 16);
  return "0x" + std::string(16 - static_cast<std::size_t>(result.ptr - buf.data()), '0') +
         std::string(buf.data(), result.ptr);
}

}  // namespace

NodeNameMap parse_node_name_map(std::string_view text, const std::string& source_name) {
  NodeNameMap names;
  std::unordered_map<std::uint64_t, int> first_line;
  int line_number = 0;
  const auto fail = [&](const std::string& what) {
    return ConfigError(source_name + ":" + std::to_string(line_number) + ": " + what);
  };
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = skip_space(text.substr(0, eol));
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_number;

    if (line.empty() || line.front() == '#') continue;
    std::size_t guid_end = 0;
    while (guid_end < line.size() && !is_space(line[guid_end]) && line[guid_end] != '"') ++guid_end;
    const std::string_view guid_text = line.substr(0, guid_end);
    const auto guid = parse_guid(guid_text);
    if (!guid) {
      // Show at most a short, printable prefix of a garbage line.
      std::string shown(guid_text.substr(0, 40));
      for (char& c : shown) c = (c < 0x20 || c == 0x7f) ? '?' : c;
      throw fail("invalid GUID \"" + shown +
                 "\": expected 0x and up to 16 hex digits, or a decimal without leading zeros");
    }

    line = skip_space(line.substr(guid_end));
    if (line.empty() || line.front() != '"')
      throw fail("expected a double-quoted node name after the GUID");
    const auto close = line.find('"', 1);
    if (close == std::string_view::npos) throw fail("missing closing quote on the node name");
    const std::string_view name = line.substr(1, close - 1);
    if (name.empty()) throw fail("empty node name");
    // Names become Prometheus label values and log text; control bytes are never intended.
    for (const char c : name) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        throw fail("control character in the node name");
    }
    const std::string_view rest = skip_space(line.substr(close + 1));
    if (!rest.empty() && rest.front() != '#') throw fail("unexpected text after the node name");

    if (const auto [it, inserted] = first_line.emplace(*guid, line_number); !inserted) {
      throw fail("duplicate GUID " + hex_guid(*guid) + " (first named on line " +
                 std::to_string(it->second) + ")");
    }
    names.emplace(*guid, std::string(name));
  }
  return names;
}

NodeNameMap load_node_name_map(const std::string& path) {
  return parse_node_name_map(read_text_file(path, kMaxNodeNameMapBytes), path);
}

}  // namespace ibfx
