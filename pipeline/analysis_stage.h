// The analysis stage of the pipeline: each sweep's ports, with the
// accumulator's totals, through the SweepAnalyzer (analysis/sweep_analyzer.h),
// and each sweep's link health (links/link_health_tracker.h), under the
// analysis settings (topology, scores and the links' thresholds: the one
// place they are held, so that a reload reaches both). It keeps what one
// sweep hands to the next (previous totals, topology, histograms, every
// cable's windows). Sweep thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analysis_config.h"
#include "analysis/sweep_analyzer.h"
#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"
#include "fabric/port_key.h"
#include "fabric/sweep_result.h"
#include "links/link_health_tracker.h"
#include "links/link_report.h"
#include "pipeline/stage.h"

namespace ibfx {

class AnalysisStage final : public Stage {
 public:
  explicit AnalysisStage(AnalysisConfig config) : config_(std::move(config)) {}

  std::string_view name() const override { return "analysis"; }
  // The frame's analysis (analyze, with the routes stage's evidence) and
  // link health (judge_links).
  void run(SweepFrame& frame) override;
  // The new analysis settings, applied by reload().
  StageReload prepare_reload(const StageSettings& next) override;

  // The sweep `sweep` of `fabric` (its node names and each node's
  // PortSamplesControl.Tick, parallel to its nodes): every discovered port
  // in fabric order, with the totals `accumulator` holds after the sweep.
  SweepAnalysis analyze(const std::shared_ptr<const Fabric>& fabric,
                        const std::vector<std::string>& node_names,
                        const std::vector<int>& device_ticks, const SweepResult& sweep,
                        const CounterAccumulator& accumulator,
                        const RouteEvidence* routes = nullptr);

  // The same sweep's link health (LinkHealthTracker::observe): `analysis`
  // is what analyze() made of it (its topology), `now` its time in Unix
  // seconds.
  std::shared_ptr<const LinkHealthReport> judge_links(const std::shared_ptr<const Fabric>& fabric,
                                                      const SweepAnalysis& analysis,
                                                      const SweepResult& sweep,
                                                      const CounterAccumulator& accumulator,
                                                      double now);

  // New settings (SIGHUP): the next sweep classifies the topology again,
  // with them and the new names, and judges the links by them.
  void reload(AnalysisConfig config);
  // A node that left the known fabric, with its port numbers: should it
  // come back, its ports' first interval starts from their new totals, and
  // the cables it ended are forgotten with it.
  void forget(std::uint64_t guid, const std::vector<std::uint8_t>& ports) override;

 private:
  AnalysisConfig config_;
  SweepAnalyzer analyzer_;
  LinkHealthTracker links_;
};

}  // namespace ibfx
