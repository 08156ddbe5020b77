#include "exposition/render_routes.h"

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup RoutesRenderer::group() const { return RenderGroup::kAggregates; }

void RoutesRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  const RouteSweep& routes = s.routes;
  // The counter from the first sweep on, routes read or not: a counter
  // that appears only with its first increment makes increase() miss it.
  w.node(ExpositionIndex::kNoNode);
  w.family(families::kRouteChanges);
  w.sample(families::kRouteChanges.name, "", routes.changes_total);
  if (!routes.model) return;
  w.family(families::kRouteBrokenEntries);
  w.sample(families::kRouteBrokenEntries.name, "", routes.model->stats().broken_routes);
  w.family(families::kRouteImbalance);
  for (const SwitchRouteBalance& b : routes.balance) {
    w.node(static_cast<std::uint32_t>(b.node));
    w.sample(families::kRouteImbalance.name, ctx.node_id(static_cast<std::size_t>(b.node)),
             b.ratio);
  }
}

}  // namespace ibfx
