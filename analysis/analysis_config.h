// The `topology:` and `scores:` sections of the config file, parsed by the
// analysis stage's own parsers (the core config loader skips them).
#pragma once

#include <string>

#include "analysis/scores.h"
#include "analysis/topology.h"

namespace ibfx {

struct AnalysisConfig {
  TopologyConfig topology;
  ScoreConfig scores;
};

// Empty path: defaults. Throws ConfigError ("<file>:<line>: topology.<key>: ...").
AnalysisConfig load_analysis_config(const std::string& path);
AnalysisConfig parse_analysis_config(const std::string& yaml_text, const std::string& source);

}  // namespace ibfx
