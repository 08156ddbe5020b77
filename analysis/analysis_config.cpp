#include "analysis/analysis_config.h"

#include "config/config.h"
#include "config/yaml_reader.h"

namespace ibfx {

AnalysisConfig parse_analysis_config(const YAML::Node& document, const std::string& source) {
  AnalysisConfig c;
  if (!document.IsMap()) return c;  // the core loader reports a non-map file
  if (const YAML::Node topology = document["topology"]) {
    c.topology = parse_topology_config(topology, source);
  }
  if (const YAML::Node scores = document["scores"]) {
    c.scores = parse_score_config(scores, source);
  }
  if (const YAML::Node links = document["links"]) c.links = parse_link_health_config(links, source);
  return c;
}

AnalysisConfig parse_analysis_config(const std::string& yaml_text, const std::string& source) {
  return parse_analysis_config(yaml::load_document(yaml_text, source), source);
}

}  // namespace ibfx
