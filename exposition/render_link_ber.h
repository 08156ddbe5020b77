// infiniband_port_symbol_ber (issue #34): the symbol BER at each receiver
// that saw symbol errors in the window. Sparse, like the error counters: a
// healthy port adds no byte to the exposition.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class LinkBerRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
