// Each host's fabric health (issue #43, Snapshot::nodes): its rails, active
// and expected, for every host with an HCA; the unhealthy hosts and those
// the blast-radius guard holds back, with their reason. Nothing before the
// first discovery.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class NodesRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
