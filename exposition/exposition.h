// A small streaming writer for the Prometheus text format 0.0.4. The fabric
// series are too many for a per-scrape object model (tens of thousands of
// ports x ~20 counters); this writes them straight into one string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "exposition/metric_family.h"

namespace ibfx {

// Where each node's series sit in one rendered text: byte ranges of every
// family's HELP/TYPE lines and of every run of consecutive samples of one
// node within a family. A `?node=` scrape copies out only the runs of the
// nodes asked for (and their families' headers) from the text the sweep
// already rendered, without rendering again.
struct ExpositionIndex {
  static constexpr std::uint32_t kNoNode = UINT32_MAX;
  struct Range {
    std::size_t begin = 0, end = 0;
  };
  struct Run {
    std::uint32_t node = kNoNode;
    std::uint32_t family = 0;  // index into `families`
    Range bytes;
  };
  std::vector<Range> families;  // the HELP and TYPE lines
  std::vector<Run> runs;        // node runs only, in text order
  std::size_t size = 0;         // bytes of the whole text
};

class ExpositionWriter {
 public:
  using Sink = std::function<void(std::string_view)>;

  // Everything accumulates in `out`.
  explicit ExpositionWriter(std::string& out) : out_(out) {}
  // Streaming: whenever `out` holds `chunk_bytes` or more after a line, it is
  // handed to `sink` and cleared, so the whole text never exists at once.
  // Call flush() at the end for the rest (it also closes the index).
  ExpositionWriter(std::string& out, Sink sink, std::size_t chunk_bytes)
      : out_(out), sink_(std::move(sink)), chunk_bytes_(chunk_bytes) {}
  void flush();

  // Records node runs and family headers into `index` from now on (the
  // offsets count every byte written through this writer).
  void set_index(ExpositionIndex* index) { index_ = index; }
  // The node the next samples belong to (ExpositionIndex::kNoNode: none,
  // e.g. fabric-wide aggregates). Only recorded with an index.
  void node(std::uint32_t n) {
    if (index_ != nullptr && n != node_) switch_node(n);
  }
  // Bytes written so far (handed to the sink or still buffered).
  std::size_t offset() const { return flushed_ + out_.size(); }

  // "# HELP" and "# TYPE" lines; type is "counter", "gauge", ...
  void family(std::string_view name, std::string_view help, std::string_view type);
  void family(const MetricFamily& f) { family(f.name, f.help, f.type); }
  // name{labels} value — `labels` is pre-escaped "k=\"v\",k2=\"v2\"" (may be empty).
  void sample(std::string_view name, std::string_view labels, std::uint64_t value);
  void sample(std::string_view name, std::string_view labels, double value);
  // As above with one more label appended after `labels`.
  void sample(std::string_view name, std::string_view labels, std::string_view extra_key,
              std::string_view extra_value, double value);

  // Text already in the exposition format (whole lines), as is.
  void text(std::string_view lines) {
    out_ += lines;
    if (sink_ && out_.size() >= chunk_bytes_) hand_off();
  }

  // Appends key="escaped value" (with a leading comma when `labels` is not
  // empty) to `labels`.
  static void add_label(std::string& labels, std::string_view key, std::string_view value);

 private:
  void begin(std::string_view name, std::string_view labels);  // "name{labels} "
  void value(std::uint64_t v);
  void value(double v);
  // name{labels} value\n in one go (V: std::uint64_t or double).
  template <typename V>
  void line(std::string_view name, std::string_view labels, V v);
  void line_done() {
    out_ += '\n';
    if (sink_ && out_.size() >= chunk_bytes_) hand_off();
  }
  void hand_off();  // a full chunk to the sink (no end-of-text bookkeeping)
  void switch_node(std::uint32_t n);
  void close_run();
  std::string& out_;
  Sink sink_;
  std::size_t chunk_bytes_ = 0;
  std::size_t flushed_ = 0;
  ExpositionIndex* index_ = nullptr;
  std::uint32_t node_ = ExpositionIndex::kNoNode;
  std::size_t run_begin_ = 0;
};

// Escapes a label value: backslash, double quote and newline (text format 0.0.4).
void append_escaped(std::string& out, std::string_view value);

}  // namespace ibfx
