// Internal to analysis/: validation helpers shared by the `topology:` and
// `scores:` section parsers, so that both report errors the same way as
// config/config.cpp: "<source>:<line>: <section>.<key>: <what is wrong>".
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "config/config.h"

namespace ibfx::analysis_detail {

class SectionReader {
 public:
  SectionReader(const YAML::Node& section, std::string source, std::string name)
      : source_(std::move(source)), name_(std::move(name)), section_line_(line_of(section, 1)) {}

  static int line_of(const YAML::Node& node, int fallback) {
    return node.Mark().is_null() ? fallback : node.Mark().line + 1;
  }
  int line_of(const YAML::Node& node) const { return line_of(node, section_line_); }

  [[noreturn]] void fail(int line, std::string_view key, const std::string& what) const {
    std::string where = source_ + ":" + std::to_string(line) + ": " + name_;
    if (!key.empty()) where += "." + std::string(key);
    throw ConfigError(where + ": " + what);
  }

  static std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Scalar:
        return "the value \"" + node.Scalar() + "\"";
      default:
        return "nothing";
    }
  }

  // The key of a mapping entry, which must be a plain scalar.
  std::string key(const YAML::Node& key_node) const {
    if (!key_node.IsScalar()) fail(line_of(key_node), "?", "keys must be plain names");
    return key_node.Scalar();
  }

  const std::string& scalar(const YAML::Node& value, int line, std::string_view key) const {
    if (!value.IsScalar()) {
      fail(line, key,
           value.IsNull() ? "missing value" : "expected a single value, got " + describe(value));
    }
    return value.Scalar();
  }

  // Calls fn(key, line, value) for each entry of `section`, which must be a
  // mapping; a key given twice is an error at its second line.
  template <typename Fn>
  void for_each_entry(const YAML::Node& section, Fn&& fn) const {
    if (!section.IsMap()) {
      fail(line_of(section), "", "expected a mapping of keys, got " + describe(section));
    }
    std::set<std::string> seen;
    for (const auto& entry : section) {
      const std::string name = key(entry.first);
      const int line = line_of(entry.first);
      if (!seen.insert(name).second) fail(line, name, "duplicate key");
      fn(name, line, entry.second);
    }
  }

  void require_map(const YAML::Node& value, int line, std::string_view key) const {
    if (value.IsNull()) return;  // every entry commented out: empty
    if (!value.IsMap()) fail(line, key, "expected a mapping, got " + describe(value));
  }

  long long integer(const YAML::Node& value, int line, std::string_view key, long long min,
                    long long max) const {
    const std::string& text = scalar(value, line, key);
    long long v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
      fail(line, key, "expected an integer, got \"" + text + "\"");
    }
    if (v < min || v > max) {
      fail(line, key,
           text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return v;
  }

  double number(const YAML::Node& value, int line, std::string_view key, double min,
                double max) const {
    const std::string& text = scalar(value, line, key);
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !(v == v)) {
      fail(line, key, "expected a number, got \"" + text + "\"");
    }
    if (v < min || v > max) {
      fail(line, key,
           text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return v;
  }

  // "0x0002c903..." (hex) or plain decimal.
  std::uint64_t guid(const std::string& text, int line, std::string_view key) const {
    std::string_view digits = text;
    int base = 10;
    if (digits.starts_with("0x") || digits.starts_with("0X")) {
      digits.remove_prefix(2);
      base = 16;
    }
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      fail(line, key, "invalid GUID \"" + text + "\" (expected 0x followed by hex digits)");
    }
    return v;
  }

  std::regex regex(const std::string& pattern, int line, std::string_view key) const {
    try {
      return std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fail(line, key, "invalid regular expression \"" + pattern + "\": " + e.what());
    }
  }

 private:
  std::string source_;
  std::string name_;
  int section_line_;
};

}  // namespace ibfx::analysis_detail
