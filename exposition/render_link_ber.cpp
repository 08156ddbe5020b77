#include "exposition/render_link_ber.h"

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup LinkBerRenderer::group() const { return RenderGroup::kPorts; }

void LinkBerRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  bool family_written = false;
  for (const PortBer& p : s.links->port_ber) {
    const std::int64_t view = ctx.view_of(p.node, p.port_index);
    if (view < 0 || !ctx.port_exported(static_cast<std::size_t>(view))) continue;
    if (!family_written) w.family(families::kPortSymbolBer);
    family_written = true;
    w.node(static_cast<std::uint32_t>(p.node));
    w.sample(families::kPortSymbolBer.name, ctx.port_id(static_cast<std::size_t>(view)), p.ber);
  }
}

}  // namespace ibfx
