#include "pipeline/node_health_stage.h"

#include <memory>
#include <utility>

#include "jobs/job_join.h"

namespace ibfx {

NodeHealthStage::NodeHealthStage(const Config& config)
    : tracker_(load_job_join_config(config.jobs), config.nodes) {}

void NodeHealthStage::run(SweepFrame& frame) {
  SnapshotInputs& in = frame.snapshot;
  if (!in.links) return;
  in.nodes =
      tracker_.judge(in.fabric, *in.links, in.node_names, in.analysis.topology.get(), frame.now);
}

StageReload NodeHealthStage::prepare_reload(const StageSettings& next) {
  // Shared: a std::function is copyable, a tracker is not.
  auto fresh = std::make_shared<NodeHealthTracker>(load_job_join_config(next.config.jobs),
                                                   next.config.nodes);
  StageReload r;
  r.apply = [this, fresh](bool /*running*/) { tracker_.take_settings(std::move(*fresh)); };
  return r;
}

}  // namespace ibfx
