#include "pipeline/route_senders_stage.h"

namespace ibfx {

void RouteSendersStage::run(SweepFrame& frame) {
  frame.snapshot.routes = tracker_.after_analysis(frame.snapshot.analysis);
}

}  // namespace ibfx
