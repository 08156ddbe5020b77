// The one YAML reader of the daemon: the config file (config.cpp), its
// analysis sections (analysis/) and the web config (http/web_config.cpp)
// all load and walk their YAML through it, so every file gets the same
// hardening and the same error shape, "<source>:<line>: <key>: <what>":
// - at most one document (a stray "---" is an error, not a silently ignored
//   second half), counted with the event parser because yaml-cpp 0.7's
//   LoadAll() never returns on some malformed streams (jbeder/yaml-cpp#1040);
// - text from the file is escaped and cut short before it reaches a message
//   (it may be binary or huge);
// - every message has a line number, never "<source>:0:".
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "base/log_text.h"
#include "config/config_error.h"

namespace ibfx::yaml {

// The 1-based line of a node, or `fallback` when yaml-cpp kept no mark (a
// null value, a node built in code).
int line_of(const YAML::Node& node, int fallback);

// "a mapping", "a list", "the value \"...\"" or "nothing", for messages.
std::string describe(const YAML::Node& node);

// Parses one YAML document; an empty text gives a null node. Throws
// ConfigError "<source>:<line>: invalid YAML: <why>" or
// "<source>:<line>: (top level): only one YAML document is allowed".
YAML::Node load_document(std::string_view text, const std::string& source);

// Whole file (at most 1 MiB, see read_text_file) as one document.
YAML::Node load_document_file(const std::string& path);

// Walks one section of a file ("topology", "scores", "tls_server_config")
// and reports errors as "<source>:<line>: <section>.<key>: <what>".
class SectionReader {
 public:
  SectionReader(const YAML::Node& section, std::string source, std::string name)
      : source_(std::move(source)), name_(std::move(name)), section_line_(line_of(section, 1)) {}

  static int line_of(const YAML::Node& node, int fallback) { return yaml::line_of(node, fallback); }
  int line_of(const YAML::Node& node) const { return line_of(node, section_line_); }
  int section_line() const { return section_line_; }

  [[noreturn]] void fail(int line, std::string_view key, const std::string& what) const;

  static std::string describe(const YAML::Node& node) { return yaml::describe(node); }

  // The key of a mapping entry, which must be a plain scalar.
  std::string key(const YAML::Node& key_node) const;

  const std::string& scalar(const YAML::Node& value, int line, std::string_view key) const;

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

  void require_map(const YAML::Node& value, int line, std::string_view key) const;

  long long integer(const YAML::Node& value, int line, std::string_view key, long long min,
                    long long max) const;
  double number(const YAML::Node& value, int line, std::string_view key, double min,
                double max) const;
  // "0x0002c903..." (hex) or plain decimal.
  std::uint64_t guid(const std::string& text, int line, std::string_view key) const;
  std::regex regex(const std::string& pattern, int line, std::string_view key) const;

 private:
  std::string source_;
  std::string name_;
  int section_line_;
};

}  // namespace ibfx::yaml
