#include "pipeline/analysis_stage.h"

#include <array>
#include <cstdint>
#include <utility>

namespace ibfx {

SweepAnalysis AnalysisStage::analyze(const std::shared_ptr<const Fabric>& fabric,
                                     const std::vector<std::string>& node_names,
                                     const std::vector<int>& device_ticks, const SweepResult& sweep,
                                     const CounterAccumulator& accumulator,
                                     const RouteEvidence* routes) {
  const std::size_t wait = static_cast<std::size_t>(Counter::kTransmitWait);
  // Every discovered port in fabric order, as the snapshot lists them; the
  // totals are the accumulator's, which nothing changes until the next sweep.
  static const std::array<std::uint64_t, kCounterCount> kNoTotals{};
  std::vector<SweepPortTotals> ports;
  ports.reserve(fabric->port_count());
  for (std::uint32_t n = 0; n < fabric->nodes.size(); ++n) {
    const FabricNode& node = fabric->nodes[n];
    for (std::uint32_t i = 0; i < node.ports.size(); ++i) {
      const auto* st = accumulator.find(PortKey{node.guid, node.ports[i].number});
      const bool read = n < sweep.port_read.size() && sweep.port_read[n][i];
      ports.push_back({n, i, device_ticks[n], read, st != nullptr && st->bits[wait] != 0,
                       st != nullptr ? &st->total : &kNoTotals});
    }
  }
  return analyzer_.analyze(fabric, node_names, ports, sweep.started_at, config_, routes);
}

std::shared_ptr<const LinkHealthReport> AnalysisStage::judge_links(
    const std::shared_ptr<const Fabric>& fabric, const SweepAnalysis& analysis,
    const SweepResult& sweep, const CounterAccumulator& accumulator, double now) {
  return links_.observe(fabric, analysis.topology.get(), accumulator, sweep.port_read, now,
                        config_.links);
}

void AnalysisStage::run(SweepFrame& frame) {
  SnapshotInputs& in = frame.snapshot;
  in.analysis = analyze(in.fabric, in.node_names, in.device_ticks, *in.sweep, *in.accumulator,
                        frame.route_evidence);
  in.links = judge_links(in.fabric, in.analysis, *in.sweep, *in.accumulator, frame.now);
}

StageReload AnalysisStage::prepare_reload(const StageSettings& next) {
  StageReload r;
  r.apply = [this, config = next.analysis](bool /*running*/) mutable { reload(std::move(config)); };
  return r;
}

void AnalysisStage::forget(std::uint64_t guid, const std::vector<std::uint8_t>& ports) {
  for (const std::uint8_t port : ports) analyzer_.forget(PortKey{guid, port});
  links_.forget(guid);
}

void AnalysisStage::reload(AnalysisConfig config) {
  config_ = std::move(config);
  analyzer_.reclassify();  // with the new names and overrides
}

}  // namespace ibfx
