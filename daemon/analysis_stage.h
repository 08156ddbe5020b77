// The analysis stage of the pipeline: each sweep's ports, with the
// accumulator's totals, through the SweepAnalyzer (analysis/sweep_analyzer.h)
// under the analysis settings (topology and scores). It keeps what one sweep
// hands to the next (previous totals, topology, histograms). Sweep thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/analysis_config.h"
#include "analysis/sweep_analyzer.h"
#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"
#include "fabric/port_key.h"
#include "fabric/sweep_result.h"

namespace ibfx {

class AnalysisStage {
 public:
  explicit AnalysisStage(AnalysisConfig config) : config_(std::move(config)) {}

  // The sweep `sweep` of `fabric` (its node names and each node's
  // PortSamplesControl.Tick, parallel to its nodes): every discovered port
  // in fabric order, with the totals `accumulator` holds after the sweep.
  SweepAnalysis analyze(const std::shared_ptr<const Fabric>& fabric,
                        const std::vector<std::string>& node_names,
                        const std::vector<int>& device_ticks, const SweepResult& sweep,
                        const CounterAccumulator& accumulator);

  // New settings (SIGHUP): the next sweep classifies the topology again,
  // with them and the new names.
  void reload(AnalysisConfig config);
  // A port that left the known fabric: should it come back, its first
  // interval starts from its new totals.
  void forget(const PortKey& key) { analyzer_.forget(key); }
  // The settings in force (the link-health thresholds read them too).
  const AnalysisConfig& config() const { return config_; }

 private:
  AnalysisConfig config_;
  SweepAnalyzer analyzer_;
};

}  // namespace ibfx
