#include "exposition/render_port_info.h"

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup PortInfoRenderer::group() const { return RenderGroup::kPorts; }

void PortInfoRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  const Fabric& f = ctx.fabric();
  auto port_of = [&](std::size_t i) -> const FabricPort& {
    return f.nodes[s.ports[i].node].ports[s.ports[i].port_index];
  };

  // The labels (the port's link and its far end) change only with a
  // discovery: built once per fabric (RenderContext, FabricLabels).
  w.family(families::kPortInfo);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    w.node(s.ports[i].node);
    w.sample(families::kPortInfo.name, ctx.port_info_labels(i), std::uint64_t{1});
  }
  w.family(families::kPortState);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    w.node(s.ports[i].node);
    w.sample(families::kPortState.name, ctx.port_id(i), std::uint64_t{port_of(i).state});
  }
  w.family(families::kPortPhysicalState);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    w.node(s.ports[i].node);
    w.sample(families::kPortPhysicalState.name, ctx.port_id(i),
             std::uint64_t{port_of(i).phys_state});
  }
  w.family(families::kPortLid);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    if (f.nodes[s.ports[i].node].type == NodeType::kSwitch) continue;
    w.node(s.ports[i].node);
    w.sample(families::kPortLid.name, ctx.port_id(i), std::uint64_t{port_of(i).lid});
  }
  w.family(families::kPortRate);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const FabricPort& fp = port_of(i);
    w.node(s.ports[i].node);
    w.sample(families::kPortRate.name, ctx.port_id(i), fp.up() ? link_data_rate_bytes(fp) : 0.0);
  }
}

}  // namespace ibfx
