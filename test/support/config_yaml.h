// The daemon's config file, built by tests instead of written by hand:
//
//   ConfigYaml().sweep_interval("1s").mad("50ms", 3).set("export.port_scores", "true").str()
//
// Keys are the config file's dotted keys (config/ibfabric_exporter.yaml);
// values are YAML scalars written as given. The config parser's own tests
// keep their hand-written YAML: there the text itself is under test.
#pragma once

#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibfx::test {

class ConfigYaml {
 public:
  // Sets `dotted_key` ("mad.timeout") to `value`; a key set twice keeps its
  // place and takes the last value.
  ConfigYaml& set(std::string_view dotted_key, std::string_view value) {
    Node* node = &root_;
    std::string_view rest = dotted_key;
    while (!rest.empty()) {
      const auto dot = rest.find('.');
      const std::string part(rest.substr(0, dot));
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
      node = &node->child(part);
    }
    if (!node->children.empty())
      throw std::logic_error("ConfigYaml: " + std::string(dotted_key) + " is a section");
    node->value = std::string(value);
    return *this;
  }
  ConfigYaml& sweep_interval(std::string_view interval) { return set("sweep_interval", interval); }
  ConfigYaml& mad(std::string_view timeout, int retries) {
    set("mad.timeout", timeout);
    return set("mad.retries", std::to_string(retries));
  }
  // PortXmitWait as raw counts too (`export.raw_transmit_wait`).
  ConfigYaml& raw_transmit_wait() { return set("export.raw_transmit_wait", "true"); }
  // The scenario driver's PortXmitWait tick (test/scenarios/README.md).
  ConfigYaml& scenario_tick() { return set("scores.tick_seconds", "256e-9"); }

  std::string str() const {
    std::string out;
    for (const Node& n : root_.children) emit(n, 0, out);
    return out;
  }
  // Writes str() to `path`; returns `path`.
  const std::string& write(const std::string& path) const {
    std::ofstream(path) << str();
    return path;
  }

 private:
  struct Node {
    std::string key;
    std::string value;
    std::vector<Node> children;
    Node& child(const std::string& k) {
      for (Node& c : children) {
        if (c.key == k) return c;
      }
      children.push_back(Node{k, {}, {}});
      return children.back();
    }
  };
  static void emit(const Node& n, std::size_t indent, std::string& out) {
    out += std::string(indent, ' ') + n.key + ":";
    if (n.children.empty()) {
      out += " " + n.value + "\n";
      return;
    }
    out += "\n";
    for (const Node& c : n.children) emit(c, indent + 2, out);
  }
  Node root_;
};

}  // namespace ibfx::test
