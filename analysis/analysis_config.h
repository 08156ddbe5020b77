// The `topology:`, `scores:` and `links:` sections of the config file, parsed by the
// analysis stage's own parsers (the core config loader skips them) from the
// document config/ already read (CommandLine::config_document).
#pragma once

#include <string>

#include "analysis/link_condition.h"
#include "analysis/scores.h"
#include "analysis/topology.h"

namespace ibfx {

struct AnalysisConfig {
  TopologyConfig topology;
  ScoreConfig scores;
  LinkHealthConfig links;  // the `links:` section (issue #34)
};

// `document` is the whole file's root (config/yaml_reader.h); a null or
// non-mapping root gives the defaults (the core loader reports the latter).
// Throws ConfigError ("<file>:<line>: topology.<key>: ...").
AnalysisConfig parse_analysis_config(const YAML::Node& document, const std::string& source);
// The same from text (tests, fuzz/analysis_config_fuzz.cpp).
AnalysisConfig parse_analysis_config(const std::string& yaml_text, const std::string& source);

}  // namespace ibfx
