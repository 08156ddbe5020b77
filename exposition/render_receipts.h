// The job receipts as counters (issue #44, receipts/): how many finished
// since the daemon started, by verdict. The receipts themselves are served
// on /jobs; no series names a job once it ended.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class ReceiptsRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
