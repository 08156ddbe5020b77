// Per-port counters, rendered generically from the counter table (mad/pma.h Counter,
// named in exposition/counter_families.h) so a new entry there appears here unchanged: error
// counters once non-zero, their per-port sum always; PortXmitWait in seconds (raw counts opt-in);
// the opt-in per-port scores (export.port_scores).
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class PortCounterRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
