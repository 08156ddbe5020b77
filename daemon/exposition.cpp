#include "daemon/exposition.h"

#include <charconv>
#include <cmath>

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

void ExpositionWriter::value(std::uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, end);
}

void ExpositionWriter::value(double v) {
  if (std::isnan(v)) {
    out_ += "NaN";
  } else if (std::isinf(v)) {
    out_ += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, end);
  }
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

void ExpositionWriter::sample(std::string_view name, std::string_view labels, std::uint64_t v) {
  begin(name, labels);
  value(v);
  line_done();
}

void ExpositionWriter::sample(std::string_view name, std::string_view labels, double v) {
  begin(name, labels);
  value(v);
  line_done();
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
