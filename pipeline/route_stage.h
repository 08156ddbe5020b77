// The routes stage of the pipeline (issue #41, docs/routes.md): the route
// model of the tables the sweep stage read (routing/route_tracker.h), kept
// from sweep to sweep, rebuilt when the fabric or the tables change. It
// runs before the analysis, which weighs a saturated up port's cause on
// the routes' evidence; RouteSendersStage finishes its work after the
// analysis. Sweep thread.
#pragma once

#include <string_view>

#include "pipeline/stage.h"
#include "routing/route_change_state.h"
#include "routing/route_tracker.h"

namespace ibfx {

class RouteStage final : public Stage {
 public:
  std::string_view name() const override { return "routes"; }
  // The model built on a thread of its own (a 98k-port build takes
  // ~0.3 s, which the sweep thread of a 1 s interval cannot spare); without
  // start() (tests, --once) each run builds before it returns.
  void start() override { tracker_.build_in_background(true); }
  // The frame's fabric and tables into the model; the frame's route
  // evidence from it.
  void run(SweepFrame& frame) override;

  // The re-routes a previous run saved (EventsStage), before the first run.
  void restore(RouteChangeState state) { tracker_.restore(std::move(state)); }
  RouteTracker& tracker() { return tracker_; }
  const RouteTracker& tracker() const { return tracker_; }

 private:
  RouteTracker tracker_;
};

}  // namespace ibfx
