#include "analysis/analysis_config.h"

#include <yaml-cpp/yaml.h>

#include "config/config.h"

namespace ibfx {

AnalysisConfig parse_analysis_config(const std::string& yaml_text, const std::string& source) {
  AnalysisConfig c;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) return c;  // the core loader reports a non-map file
  if (root["topology"]) c.topology = parse_topology_config(root["topology"], source);
  if (root["scores"]) c.scores = parse_score_config(root["scores"], source);
  return c;
}

AnalysisConfig load_analysis_config(const std::string& path) {
  if (path.empty()) return {};
  return parse_analysis_config(detail::read_text_file(path, 1 << 20), path);
}

}  // namespace ibfx
