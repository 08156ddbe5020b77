// The analysis state one sweep hands to the next: the topology of the fabric
// it was classified from, every port's totals at the previous sweep, and the
// cumulative W and U histograms, and the roots of congestion it holds. The exporter gives it each
// sweep's totals and publishes what it returns; it never sends a MAD.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analysis_config.h"
#include "analysis/ratio_histogram.h"
#include "analysis/root_history.h"
#include "analysis/scores.h"
#include "analysis/topology.h"
#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"

namespace ibfx {

// One port's accumulated totals after a sweep.
struct SweepPortTotals {
  std::uint32_t node = 0;        // index into Fabric::nodes
  std::uint32_t port_index = 0;  // index into FabricNode::ports
  int device_tick = -1;          // the node's PortSamplesControl.Tick; -1: unknown
  bool read = false;             // read by this sweep
  bool has_xmit_wait = false;    // PortXmitWait was ever read
  const std::array<std::uint64_t, kCounterCount>* totals = nullptr;
};

// What the analysis adds to a snapshot (no result until two sweeps).
struct SweepAnalysis {
  std::shared_ptr<const Topology> topology;
  AnalysisResult result;
  std::vector<PortSample> samples;  // parallel to result.ports
  double interval_seconds = 0;
  std::map<std::pair<Tier, int>, StallHistogram> histograms;
  std::map<std::pair<Tier, int>, UtilizationHistogram> utilization_histograms;
  std::uint64_t clamped_total = 0;
  ScoreConfig scores;
};

class SweepAnalyzer {
 public:
  // `fabric` is the fabric the sweep ran on and `node_names` its names; the
  // topology is classified again only when the fabric changed (or after
  // reclassify()). Ports not read keep their previous totals.
  SweepAnalysis analyze(const std::shared_ptr<const Fabric>& fabric,
                        const std::vector<std::string>& node_names,
                        const std::vector<SweepPortTotals>& ports,
                        std::chrono::system_clock::time_point started_at,
                        const AnalysisConfig& config, const RouteEvidence* routes = nullptr);
  // The next analyze() classifies the topology again (new names or overrides).
  void reclassify() { topology_fabric_.reset(); }
  // A port that left the known fabric: should it come back, its first
  // interval starts from its new totals, not from ones hours old.
  void forget(const PortKey& key) {
    previous_.erase(key);
    roots_.forget(key);
  }

 private:
  std::shared_ptr<const Fabric> topology_fabric_;  // fabric the topology was built from
  std::shared_ptr<const Topology> topology_;
  std::unordered_map<PortKey, std::array<std::uint64_t, kCounterCount>, PortKeyHash> previous_;
  std::chrono::system_clock::time_point previous_sweep_{};
  std::map<std::pair<Tier, int>, StallHistogram> histograms_;
  std::map<std::pair<Tier, int>, UtilizationHistogram> utilization_histograms_;
  std::uint64_t clamped_total_ = 0;
  RootHistory roots_;  // the roots of the last sweeps, held (hysteresis)
};

}  // namespace ibfx
