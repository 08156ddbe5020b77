// Node info and LIDs, whether each node answered, and what the topology classification found
// (rails, miscabling).
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class TopologyRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
