// The unhealthy links (issue #34) as series: infiniband_link_unhealthy, one
// per unhealthy cable with both ends and its worst condition, and
// infiniband_link_events_total by condition.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class LinksRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
