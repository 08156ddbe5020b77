// The daemon's own health: its prometheus-cpp registry (serialized with the snapshot) and the few
// values the analysis keeps.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class ExporterHealthRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
