#include "exposition/render_topology.h"

#include <cstdio>
#include <map>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup TopologyRenderer::group() const { return RenderGroup::kNodes; }

void TopologyRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  const Fabric& f = ctx.fabric();

  w.family(families::kNodeInfo);
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const FabricNode& node = f.nodes[n];
    std::string l = ctx.node_named(n);
    char hex[16];
    ExpositionWriter::add_label(l, "node_description", node.description);
    std::snprintf(hex, sizeof hex, "0x%06x", node.vendor_id);
    ExpositionWriter::add_label(l, "vendor_id", hex);
    std::snprintf(hex, sizeof hex, "0x%04x", node.device_id);
    ExpositionWriter::add_label(l, "device_id", hex);
    ExpositionWriter::add_label(l, "num_ports", std::to_string(node.num_ports));
    ExpositionWriter::add_label(l, "tier", ctx.tier_of(n));
    ExpositionWriter::add_label(l, "rail", ctx.rail_of(n));
    w.node(static_cast<std::uint32_t>(n));
    w.sample(families::kNodeInfo.name, l, std::uint64_t{1});
  }
  // A gauge, not a label of the info metric: the SM may reassign LIDs, and
  // a label would start a new info series each time.
  w.family(families::kNodeLid);
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    w.node(static_cast<std::uint32_t>(n));
    w.sample(families::kNodeLid.name, ctx.node_id(n), std::uint64_t{f.nodes[n].lid});
  }

  w.family(families::kNodeUp);
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    // A node the last discovery missed is still swept and says itself
    // whether it is there; one that cannot be asked (no LID) shows as down.
    const NodeSweep& status = s.node_status[n];
    if (f.nodes[n].present && !status.swept) continue;
    w.node(static_cast<std::uint32_t>(n));
    w.sample(families::kNodeUp.name, ctx.node_id(n),
             std::uint64_t{status.swept && status.answered ? 1u : 0u});
  }

  if (!s.analysis.topology) return;
  const Topology& t = *s.analysis.topology;
  std::map<int, std::uint64_t> per_rail;
  for (const MiscabledHca& m : t.miscabled) ++per_rail[m.actual_rail];
  w.family(families::kMiscabledPorts);
  w.node(ExpositionIndex::kNoNode);
  for (const auto& [rail, n] : per_rail) {
    std::string l;
    ExpositionWriter::add_label(l, "rail", std::to_string(rail));
    w.sample(families::kMiscabledPorts.name, l, n);
  }
  w.family(families::kMiscabledPortInfo);
  for (const MiscabledHca& m : t.miscabled) {
    const auto hca = static_cast<std::size_t>(m.hca_node);
    const auto sw = static_cast<std::size_t>(m.switch_node);
    std::string l = ctx.node_named(hca);
    ExpositionWriter::add_label(l, "port", std::to_string(m.hca_port));
    ExpositionWriter::add_label(l, "switch_guid", guid_hex(f.nodes[sw].guid));
    ExpositionWriter::add_label(l, "switch_name", s.node_names[sw]);
    ExpositionWriter::add_label(l, "switch_port", std::to_string(m.switch_port));
    ExpositionWriter::add_label(l, "expected_rail", std::to_string(m.expected_rail));
    ExpositionWriter::add_label(l, "actual_rail", std::to_string(m.actual_rail));
    w.node(static_cast<std::uint32_t>(hca));
    w.sample(families::kMiscabledPortInfo.name, l, std::uint64_t{1});
  }
  w.family(families::kSingleRail);
  for (std::size_t n = 0; n < t.single_rail.size() && n < f.nodes.size(); ++n) {
    if (t.single_rail[n] == kNoRail || t.tier[n] == Tier::kLeaf || t.tier[n] == Tier::kHca) {
      continue;
    }
    w.node(static_cast<std::uint32_t>(n));
    w.sample(families::kSingleRail.name, ctx.node_named(n),
             static_cast<std::uint64_t>(t.single_rail[n]));
  }
}

}  // namespace ibfx
