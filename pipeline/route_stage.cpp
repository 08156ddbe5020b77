#include "pipeline/route_stage.h"

namespace ibfx {

void RouteStage::run(SweepFrame& frame) {
  tracker_.update(frame.snapshot.fabric, frame.tables, frame.now);
  frame.route_evidence = tracker_.evidence();
}

}  // namespace ibfx
