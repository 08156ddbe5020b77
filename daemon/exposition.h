// A small streaming writer for the Prometheus text format 0.0.4. The fabric
// series are too many for a per-scrape object model (tens of thousands of
// ports x ~20 counters); this writes them straight into one string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ibfx {

class ExpositionWriter {
 public:
  using Sink = std::function<void(std::string_view)>;

  // Everything accumulates in `out`.
  explicit ExpositionWriter(std::string& out) : out_(out) {}
  // Streaming: whenever `out` holds `chunk_bytes` or more after a line, it is
  // handed to `sink` and cleared, so the whole text never exists at once.
  // Call flush() at the end for the rest.
  ExpositionWriter(std::string& out, Sink sink, std::size_t chunk_bytes)
      : out_(out), sink_(std::move(sink)), chunk_bytes_(chunk_bytes) {}
  void flush();

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
  void line_done() {
    out_ += '\n';
    if (sink_ && out_.size() >= chunk_bytes_) flush();
  }
  std::string& out_;
  Sink sink_;
  std::size_t chunk_bytes_ = 0;
};

// Escapes a label value: backslash, double quote and newline (text format 0.0.4).
void append_escaped(std::string& out, std::string_view value);

}  // namespace ibfx
