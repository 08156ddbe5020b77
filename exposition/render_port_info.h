// Per-port link state and info: the info metric per-port series join on for names, tier, rail and
// the far end of the cable; state and LIDs as gauges.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class PortInfoRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
