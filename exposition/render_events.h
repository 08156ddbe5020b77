// The congestion events as counters (analysis/congestion_events.h): how
// many started and how many seconds they lasted, by cause, and how many are
// active. The events themselves are served as JSON on /events.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class EventsRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
