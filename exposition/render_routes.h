// The routes (issue #41): each switch's routing balance over its up ports,
// the re-routes seen, and forwarding entries that lead nowhere. The route
// model's own reading health (table ages, the last full read) is the
// daemon's (infiniband_exporter_route_*).
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class RoutesRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
