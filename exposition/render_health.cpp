#include "exposition/render_health.h"

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup ExporterHealthRenderer::group() const { return RenderGroup::kAggregates; }

void ExporterHealthRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  w.family(families::kClamped);
  w.node(ExpositionIndex::kNoNode);
  w.sample(families::kClamped.name, "", s.analysis.clamped_total);
  if (s.fabric) {
    w.family(families::kLocalPortState);
    w.sample(families::kLocalPortState.name, "",
             static_cast<std::uint64_t>(s.fabric->local_port_state));
  }
  // The registry (daemon/exporter_metrics.h) was serialized when the
  // snapshot was built, so that it and the fabric series are one instant.
  if (!s.exporter_metrics_text.empty()) w.text(s.exporter_metrics_text);
}

}  // namespace ibfx
