#include "exposition/exposition.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace ibfx {

void append_escaped(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

void ExpositionWriter::add_label(std::string& labels, std::string_view key, std::string_view v) {
  if (!labels.empty()) labels += ',';
  labels += key;
  labels += "=\"";
  append_escaped(labels, v);
  labels += '"';
}

void ExpositionWriter::close_run() {
  if (index_ == nullptr || node_ == ExpositionIndex::kNoNode || index_->families.empty()) return;
  if (offset() > run_begin_) {
    index_->runs.push_back(
        {node_, static_cast<std::uint32_t>(index_->families.size() - 1), {run_begin_, offset()}});
  }
}

void ExpositionWriter::switch_node(std::uint32_t n) {
  close_run();
  node_ = n;
  run_begin_ = offset();
}

void ExpositionWriter::family(std::string_view name, std::string_view help, std::string_view type) {
  const std::size_t begin = offset();
  if (index_ != nullptr) {
    close_run();
    node_ = ExpositionIndex::kNoNode;
  }
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  // HELP text escapes only backslash and newline.
  for (char c : help) {
    if (c == '\\') {
      out_ += "\\\\";
    } else if (c == '\n') {
      out_ += "\\n";
    } else {
      out_ += c;
    }
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
  if (index_ != nullptr) index_->families.push_back({begin, offset()});
  if (sink_ && out_.size() >= chunk_bytes_) hand_off();
}

void ExpositionWriter::flush() {
  if (index_ != nullptr) {
    // The end of the text: close the last run.
    close_run();
    node_ = ExpositionIndex::kNoNode;
    index_->size = offset();
  }
  hand_off();
}

void ExpositionWriter::hand_off() {
  if (sink_ && !out_.empty()) {
    flushed_ += out_.size();
    sink_(out_);
    out_.clear();
  }
}

namespace {
// The value as the text format writes it: shortest round-trip digits.
std::size_t format_value(std::uint64_t v, char* buf) {
  return static_cast<std::size_t>(std::to_chars(buf, buf + 24, v).ptr - buf);
}
std::size_t format_value(double v, char* buf) {
  if (std::isnan(v) || std::isinf(v)) {
    const std::string_view word = std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
    return word.copy(buf, word.size());
  }
  return static_cast<std::size_t>(std::to_chars(buf, buf + 32, v).ptr - buf);
}
}  // namespace

void ExpositionWriter::value(std::uint64_t v) {
  char buf[32];
  out_.append(buf, format_value(v, buf));
}

void ExpositionWriter::value(double v) {
  char buf[32];
  out_.append(buf, format_value(v, buf));
}

void ExpositionWriter::begin(std::string_view name, std::string_view labels) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    out_ += labels;
    out_ += '}';
  }
  out_ += ' ';
}

template <typename V>
void ExpositionWriter::line(std::string_view name, std::string_view labels, V v) {
  // The whole line in one growth of the buffer and plain copies: the
  // per-port families are ~1.5M lines a render at 98k ports, and five
  // appends, each checking the capacity, were most of their cost.
  char number[32];
  const std::size_t digits = format_value(v, number);
  const bool braces = !labels.empty();
  const std::size_t at = out_.size();
  out_.resize(at + name.size() + labels.size() + (braces ? 2 : 0) + digits + 2);
  char* p = out_.data() + at;
  std::memcpy(p, name.data(), name.size());
  p += name.size();
  if (braces) {
    *p++ = '{';
    std::memcpy(p, labels.data(), labels.size());
    p += labels.size();
    *p++ = '}';
  }
  *p++ = ' ';
  std::memcpy(p, number, digits);
  p[digits] = '\n';
  if (sink_ && out_.size() >= chunk_bytes_) hand_off();
}

void ExpositionWriter::sample(std::string_view name, std::string_view labels, std::uint64_t v) {
  line(name, labels, v);
}

void ExpositionWriter::sample(std::string_view name, std::string_view labels, double v) {
  line(name, labels, v);
}

void ExpositionWriter::sample(std::string_view name, std::string_view labels,
                              std::string_view extra_key, std::string_view extra_value, double v) {
  out_ += name;
  out_ += '{';
  out_ += labels;
  if (!labels.empty()) out_ += ',';
  out_ += extra_key;
  out_ += "=\"";
  append_escaped(out_, extra_value);
  out_ += "\"} ";
  value(v);
  line_done();
}

}  // namespace ibfx
