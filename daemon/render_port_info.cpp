#include "daemon/render_port_info.h"

#include "daemon/metric_families.h"
#include "daemon/snapshot.h"

namespace ibfx {

RenderGroup PortInfoRenderer::group() const { return RenderGroup::kPorts; }

void PortInfoRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  const Fabric& f = ctx.fabric();
  auto port_of = [&](std::size_t i) -> const FabricPort& {
    return f.nodes[s.ports[i].node].ports[s.ports[i].port_index];
  };

  // Facts of the port only: the node's name, type, tier and rail are on
  // infiniband_node_info (join on node_guid), once per node instead of
  // once per port (issue #15). Link width and speed stay labels: they
  // change only when a link retrains, which is itself worth a new series.
  // State and LID change with every flap or SM re-sweep: gauges below. The
  // far end's name, type and tier stay here: the 2 AM reader of one port
  // sees where its cable goes, and the rules compare a link with its peers
  // without a second join through remote_node_guid.
  w.family(families::kPortInfo);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const FabricPort& fp = port_of(i);
    const std::uint32_t n = s.ports[i].node;
    std::string l = ctx.port_id(i);
    ExpositionWriter::add_label(l, "link_width", link_width_name(fp.width_active));
    ExpositionWriter::add_label(l, "link_speed", link_speed_name(fp));
    const bool linked = fp.linked() && static_cast<std::size_t>(fp.remote_node) < f.nodes.size();
    const auto r = static_cast<std::size_t>(fp.remote_node);
    ExpositionWriter::add_label(l, "remote_node_guid", linked ? guid_hex(f.nodes[r].guid) : "");
    ExpositionWriter::add_label(l, "remote_node_name", linked ? s.node_names[r] : "");
    ExpositionWriter::add_label(l, "remote_port", linked ? std::to_string(fp.remote_port) : "");
    // What kind of link this is (the peers a degraded link is compared with).
    ExpositionWriter::add_label(l, "remote_node_type",
                                linked ? node_type_name(f.nodes[r].type) : "");
    ExpositionWriter::add_label(l, "remote_tier", linked ? ctx.tier_of(r) : "");
    w.node(n);
    w.sample(families::kPortInfo.name, l, std::uint64_t{1});
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
