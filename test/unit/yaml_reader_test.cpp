// The one YAML reader (config/yaml_reader.h): one document only, escaped
// text in messages, and SectionReader's "<source>:<line>: <section>.<key>:
// <what>" errors for each kind of value.
#include "config/yaml_reader.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace ibfx;

namespace {

template <typename Fn>
std::string yaml_error(Fn&& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("yaml::load_document takes one document and names the line of what is wrong",
          "[yaml_reader]") {
  CHECK(yaml::load_document("", "f.yaml").IsNull());
  const YAML::Node doc = yaml::load_document("a: 1\nb:\n  c: two\n", "f.yaml");
  CHECK(doc["b"]["c"].as<std::string>() == "two");
  CHECK(yaml::line_of(doc["b"]["c"], 0) == 3);
  CHECK(yaml::line_of(YAML::Node(), 42) == 42);  // built in code: no mark

  CHECK(yaml_error([] { yaml::load_document("a: 1\n---\nb: 2\n", "f.yaml"); }) ==
        "f.yaml:3: (top level): only one YAML document is allowed");
  CHECK(yaml_error([] { yaml::load_document("a: [1, 2\nb: 3\n", "f.yaml"); }).rfind("f.yaml:", 0) ==
        0);
  CHECK(yaml_error([] {
          yaml::load_document("a: [1, 2\nb: 3\n", "f.yaml");
        }).find(": invalid YAML: ") != std::string::npos);
  CHECK(yaml_error([] {
          yaml::load_document_file("/nonexistent/ibfx.yaml");
        }).rfind("/nonexistent/ibfx.yaml: cannot read", 0) == 0);
}

TEST_CASE("yaml::describe says what a node is, for messages", "[yaml_reader]") {
  const YAML::Node doc = yaml::load_document("l: [1]\nm: {a: 1}\ns: \"x\\ty\"\nn:\n", "f");
  CHECK(yaml::describe(doc["l"]) == "a list");
  CHECK(yaml::describe(doc["m"]) == "a mapping");
  CHECK(yaml::describe(doc["s"]) == "the value \"x\\x09y\"");
  CHECK(yaml::describe(doc["n"]) == "nothing");
}

TEST_CASE("SectionReader walks a mapping and reports errors with file, line, section and key",
          "[yaml_reader]") {
  const YAML::Node doc = yaml::load_document(
      "scores:\n"                     // 1
      "  top_k: 20\n"                 // 2
      "  floor: 0.5\n"                // 3
      "  guid: 0x00000000000000ff\n"  // 4
      "  decimal: 255\n"              // 5
      "  list: [1, 2]\n"              // 6
      "  empty:\n"                    // 7
      "  pattern: \"(\"\n",           // 8
      "c.yaml");
  const yaml::SectionReader r(doc["scores"], "c.yaml", "scores");
  CHECK(r.section_line() == 2);
  std::vector<std::string> keys;
  std::vector<int> lines;
  r.for_each_entry(doc["scores"], [&](const std::string& key, int line, const YAML::Node&) {
    keys.push_back(key);
    lines.push_back(line);
  });
  CHECK(keys ==
        std::vector<std::string>{"top_k", "floor", "guid", "decimal", "list", "empty", "pattern"});
  CHECK(lines == std::vector<int>{2, 3, 4, 5, 6, 7, 8});

  const YAML::Node s = doc["scores"];
  CHECK(r.integer(s["top_k"], 2, "top_k", 1, 100) == 20);
  CHECK(yaml_error([&] { r.integer(s["top_k"], 2, "top_k", 1, 10); }) ==
        "c.yaml:2: scores.top_k: 20 is out of range [1, 10]");
  CHECK(yaml_error([&] { r.integer(s["floor"], 3, "floor", 0, 10); }) ==
        "c.yaml:3: scores.floor: expected an integer, got \"0.5\"");
  CHECK(r.number(s["floor"], 3, "floor", 0, 1) == 0.5);
  CHECK(yaml_error([&] {
          r.number(s["floor"], 3, "floor", 0.75, 1);
        }).rfind("c.yaml:3: scores.floor: 0.5 is out of range [0.75", 0) == 0);
  CHECK(r.guid(r.scalar(s["guid"], 4, "guid"), 4, "guid") == 0xff);
  CHECK(r.guid(r.scalar(s["decimal"], 5, "decimal"), 5, "decimal") == 255);
  CHECK(yaml_error([&] { r.guid("0xg1", 4, "guid"); }) ==
        "c.yaml:4: scores.guid: invalid GUID \"0xg1\" (expected 0x followed by hex digits)");
  CHECK(yaml_error([&] { r.guid("0x", 4, "guid"); }).find("invalid GUID") != std::string::npos);
  CHECK(yaml_error([&] { r.scalar(s["list"], 6, "list"); }) ==
        "c.yaml:6: scores.list: expected a single value, got a list");
  CHECK(yaml_error([&] { r.scalar(s["empty"], 7, "empty"); }) ==
        "c.yaml:7: scores.empty: missing value");
  CHECK(yaml_error([&] { r.require_map(s["list"], 6, "list"); }) ==
        "c.yaml:6: scores.list: expected a mapping, got a list");
  r.require_map(s["empty"], 7, "empty");  // all entries commented out: fine
  CHECK(yaml_error([&] {
          r.regex("(", 8, "pattern");
        }).rfind("c.yaml:8: scores.pattern: invalid regular expression \"(\": ", 0) == 0);
  CHECK(std::regex_search("mlx5_3", r.regex("mlx5_([0-9]+)$", 8, "pattern")));
}

TEST_CASE("SectionReader refuses duplicate keys, non-scalar keys and a section that is no mapping",
          "[yaml_reader]") {
  const auto walk = [](const std::string& text) {
    return yaml_error([&] {
      const YAML::Node doc = yaml::load_document(text, "c.yaml");
      const yaml::SectionReader r(doc["topology"], "c.yaml", "topology");
      r.for_each_entry(doc["topology"], [](const std::string&, int, const YAML::Node&) {});
    });
  };
  CHECK(walk("topology:\n  a: 1\n  a: 2\n") == "c.yaml:3: topology.a: duplicate key");
  CHECK(walk("topology:\n  [x]: 1\n") == "c.yaml:2: topology.?: keys must be plain names");
  CHECK(walk("topology:\n  - a\n") == "c.yaml:2: topology: expected a mapping of keys, got a list");
  CHECK(walk("topology:\n  a: 1\n") == "<no error>");
}
