// Per-port counters, rendered generically from the collectors' counter table (collectors/pma.h
// CounterInfo) so a new entry there appears here unchanged; PortXmitWait in seconds; the opt-in
// per-port scores (export.port_scores).
#pragma once

#include "daemon/renderer.h"

namespace ibfx {

class PortCounterRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
