// A small streaming writer for the Prometheus text format 0.0.4. The fabric
// series are too many for a per-scrape object model (tens of thousands of
// ports x ~20 counters); this writes them straight into one string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ibfx {

class ExpositionWriter {
 public:
  explicit ExpositionWriter(std::string& out) : out_(out) {}

  // "# HELP" and "# TYPE" lines; type is "counter", "gauge", ...
  void family(std::string_view name, std::string_view help, std::string_view type);
  // name{labels} value — `labels` is pre-escaped "k=\"v\",k2=\"v2\"" (may be empty).
  void sample(std::string_view name, std::string_view labels, std::uint64_t value);
  void sample(std::string_view name, std::string_view labels, double value);
  // As above with one more label appended after `labels`.
  void sample(std::string_view name, std::string_view labels, std::string_view extra_key,
              std::string_view extra_value, double value);

  // Appends key="escaped value" (with a leading comma when `labels` is not
  // empty) to `labels`.
  static void add_label(std::string& labels, std::string_view key, std::string_view value);

 private:
  void begin(std::string_view name, std::string_view labels);  // "name{labels} "
  void value(std::uint64_t v);
  void value(double v);
  std::string& out_;
};

// Escapes a label value: backslash, double quote and newline (text format 0.0.4).
void append_escaped(std::string& out, std::string_view value);

}  // namespace ibfx
