// The analysis: W and U histograms, roots of congestion and their victims, hotspot and tail scores,
// worst paths, rail/tier/switch aggregates.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class ScoresRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
