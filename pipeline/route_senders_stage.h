// The second half of the routes' work in the pipeline, after the analysis:
// each switch's routing balance against the analysis's topology and the
// senders behind each of its roots of congestion (RouteTracker::
// after_analysis), into the frame's routes, for the jobs, events and
// receipts stages after it. Sweep thread.
#pragma once

#include <string_view>

#include "pipeline/stage.h"
#include "routing/route_tracker.h"

namespace ibfx {

class RouteSendersStage final : public Stage {
 public:
  // `tracker`: the routes stage's, which outlives this stage.
  explicit RouteSendersStage(RouteTracker& tracker) : tracker_(tracker) {}

  std::string_view name() const override { return "senders"; }
  void run(SweepFrame& frame) override;

 private:
  RouteTracker& tracker_;
};

}  // namespace ibfx
