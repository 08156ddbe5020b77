// The nodes stage of the pipeline (issue #43, docs/nodes.md): each host's
// fabric health (nodes/node_health.h), judged after the sweep's link
// health from the hosts' HCA cables, into the frame's nodes. Sweep thread.
#pragma once

#include <string_view>

#include "config/config.h"
#include "nodes/node_health.h"
#include "pipeline/stage.h"

namespace ibfx {

class NodeHealthStage final : public Stage {
 public:
  // Throws ConfigError for a bad host map file or host_regex (start-up).
  explicit NodeHealthStage(const Config& config);

  std::string_view name() const override { return "nodes"; }
  void run(SweepFrame& frame) override;
  // The new settings read (the jobs' host map and regex name the hosts)
  // into a tracker whose settings apply() takes; each host's spells stay.
  StageReload prepare_reload(const StageSettings& next) override;

 private:
  NodeHealthTracker tracker_;
};

}  // namespace ibfx
