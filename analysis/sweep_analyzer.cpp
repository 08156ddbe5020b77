#include "analysis/sweep_analyzer.h"

namespace ibfx {

SweepAnalysis SweepAnalyzer::analyze(const std::shared_ptr<const Fabric>& fabric,
                                     const std::vector<std::string>& node_names,
                                     const std::vector<SweepPortTotals>& ports,
                                     std::chrono::system_clock::time_point started_at,
                                     const AnalysisConfig& config, const RouteEvidence* routes) {
  // The topology follows discovery: rebuilt only when the fabric changed.
  if (fabric != topology_fabric_) {
    topology_ =
        std::make_shared<const Topology>(classify_topology(*fabric, node_names, config.topology));
    topology_fabric_ = fabric;
  }
  SweepAnalysis a;
  a.topology = topology_;
  a.scores = config.scores;
  const double dt = std::chrono::duration<double>(started_at - previous_sweep_).count();
  const bool have_interval = previous_sweep_.time_since_epoch().count() != 0 && dt > 0;
  for (const SweepPortTotals& p : ports) {
    if (!p.read || p.totals == nullptr) continue;
    const FabricNode& node = fabric->nodes[p.node];
    const PortKey key{node.guid, node.ports[p.port_index].number};
    auto prev = previous_.find(key);
    if (have_interval && prev != previous_.end()) {
      PortSample sample = make_port_sample(static_cast<std::int32_t>(p.node), p.port_index,
                                           prev->second, *p.totals, dt);
      sample.has_xmit_wait = p.has_xmit_wait;
      sample.device_tick = p.device_tick;
      a.samples.push_back(sample);
    }
    previous_[key] = *p.totals;
  }
  previous_sweep_ = started_at;
  if (!a.samples.empty()) {
    a.interval_seconds = dt;
    a.result = ibfx::analyze(*topology_, *fabric, a.samples, config.scores,
                             roots_.recall(*fabric, a.samples), routes);
    roots_.update(*fabric, a.result.ports, a.result.congestion);
    clamped_total_ += a.result.clamped;
    for (const PortScore& ps : a.result.ports) {
      if (ps.valid) histograms_[{ps.tier, ps.rail}].observe(ps.stall);
      if (ps.utilization_valid) {
        utilization_histograms_[{ps.tier, ps.rail}].observe(ps.utilization);
      }
    }
  }
  a.histograms = histograms_;
  a.utilization_histograms = utilization_histograms_;
  a.clamped_total = clamped_total_;
  return a;
}

}  // namespace ibfx
