#include "config/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

#include "config/text_file.h"
#include "config/user_regex.h"

namespace ibfx::yaml {
namespace {

constexpr std::size_t kMaxYamlBytes = 1 << 20;  // a real config is a few KiB

// The line of each document's first node (1-based), as LoadAll's nodes
// would report it.
class DocumentLines final : public YAML::EventHandler {
 public:
  std::vector<int> first_lines;
  void OnDocumentStart(const YAML::Mark&) override { pending_ = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& m) {
    if (!pending_) return;
    pending_ = false;
    first_lines.push_back(m.is_null() ? 1 : m.line + 1);
  }
  bool pending_ = false;
};

}  // namespace

int line_of(const YAML::Node& node, int fallback) {
  return node.Mark().is_null() ? fallback : node.Mark().line + 1;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return "the value " + quote(node.Scalar());
    default:
      return "nothing";
  }
}

YAML::Node load_document(std::string_view text, const std::string& source) {
  YAML::Node doc;
  int second_document_line = 0;
  try {
    // Count at most two documents with the event parser (LoadAll may never
    // return, see the header), then build the first.
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    DocumentLines lines;
    for (int i = 0; i < 2 && parser.HandleNextDocument(lines); ++i) {
    }
    if (lines.first_lines.size() > 1) second_document_line = lines.first_lines[1];
    doc = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp also bounds nesting depth, so deep garbage ends up here too.
    const std::string what = "invalid YAML: " + printable(e.msg);
    if (e.mark.is_null()) throw ConfigError(source + ": " + what);
    throw ConfigError(source + ":" + std::to_string(e.mark.line + 1) + ": " + what);
  }
  if (second_document_line > 0) {
    throw ConfigError(source + ":" + std::to_string(second_document_line) +
                      ": (top level): only one YAML document is allowed");
  }
  return doc;
}

YAML::Node load_document_file(const std::string& path) {
  return load_document(read_text_file(path, kMaxYamlBytes), path);
}

void SectionReader::fail(int line, std::string_view key, const std::string& what) const {
  std::string where = source_ + ":" + std::to_string(line) + ": " + name_;
  if (!key.empty()) where += "." + printable(key);
  throw ConfigError(where + ": " + what);
}

std::string SectionReader::key(const YAML::Node& key_node) const {
  if (!key_node.IsScalar()) fail(line_of(key_node), "?", "keys must be plain names");
  return key_node.Scalar();
}

const std::string& SectionReader::scalar(const YAML::Node& value, int line,
                                         std::string_view key) const {
  if (!value.IsScalar()) {
    fail(line, key,
         value.IsNull() ? "missing value" : "expected a single value, got " + describe(value));
  }
  return value.Scalar();
}

void SectionReader::require_map(const YAML::Node& value, int line, std::string_view key) const {
  if (value.IsNull()) return;  // every entry commented out: empty
  if (!value.IsMap()) fail(line, key, "expected a mapping, got " + describe(value));
}

long long SectionReader::integer(const YAML::Node& value, int line, std::string_view key,
                                 long long min, long long max) const {
  const std::string& text = scalar(value, line, key);
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail(line, key, "expected an integer, got " + quote(text));
  }
  if (v < min || v > max) {
    fail(line, key,
         text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return v;
}

double SectionReader::number(const YAML::Node& value, int line, std::string_view key, double min,
                             double max) const {
  const std::string& text = scalar(value, line, key);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v == v)) {
    fail(line, key, "expected a number, got " + quote(text));
  }
  if (v < min || v > max) {
    fail(line, key,
         text + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return v;
}

std::uint64_t SectionReader::guid(const std::string& text, int line, std::string_view key) const {
  std::string_view digits = text;
  int base = 10;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    digits.remove_prefix(2);
    base = 16;
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    fail(line, key, "invalid GUID " + quote(text) + " (expected 0x followed by hex digits)");
  }
  return v;
}

std::regex SectionReader::regex(const std::string& pattern, int line, std::string_view key) const {
  try {
    return compile_user_regex(pattern);
  } catch (const UserRegexError& e) {
    fail(line, key, e.what());
  }
}

}  // namespace ibfx::yaml
