// Renders the per-lane counters of the opt-in groups (per-VL PortXmitWait
// and stall seconds, per-SL FECN/BECN, per-VL time congested): the series
// that need a `vl` or `sl` label beyond the port's. Cardinality: a port
// exports a lane only once that lane's total is non-zero, so a fabric that
// uses 2 of 16 VLs pays for 2 (docs/counters.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "exposition/exposition.h"
#include "exposition/renderer.h"

namespace ibfx {

struct Snapshot;

// `port_labels` is parallel to snapshot.ports (the port's usual labels).
void render_lane_counters(const Snapshot& snapshot,
                          const std::vector<std::string_view>& port_labels, ExpositionWriter& w);

// The per-lane families as one concern of the `ports` group.
class LaneCounterRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
