#include "daemon/render_port_counters.h"

#include "analysis/xmit_wait_model.h"
#include "daemon/metric_families.h"
#include "daemon/snapshot.h"

namespace ibfx {

RenderGroup PortCounterRenderer::group() const { return RenderGroup::kPorts; }

void PortCounterRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  const Fabric& f = ctx.fabric();
  const ExportConfig& ex = s.exporting;

  // Every entry of the counter table, whatever it is: its metric name and
  // help come from there, so a counter added to the table shows up here.
  for (std::size_t c = 0; c < kCounterCount; ++c) {
    const CounterInfo& info = counter_info(c);
    const bool error = c >= static_cast<std::size_t>(Counter::kSymbolErrors);
    const bool traffic = !error && c != static_cast<std::size_t>(Counter::kTransmitWait);
    if ((error && !ex.error_counters) || (traffic && !ex.traffic_counters)) continue;
    bool any = false;
    for (std::size_t i = 0; i < s.ports.size() && !any; ++i) {
      any = s.ports[i].present[c] != 0 && ctx.port_exported(i);
    }
    if (!any) continue;
    w.family(info.metric, info.help, "counter");
    for (std::size_t i = 0; i < s.ports.size(); ++i) {
      const PortView& p = s.ports[i];
      if (p.present[c] == 0 || !ctx.port_exported(i)) continue;
      w.node(p.node);
      w.sample(info.metric, ctx.port_id(i), p.totals[c] * info.scale);
    }
  }

  // Stall seconds: PortXmitWait counts x the seconds one count stands for on
  // that port's device, width and speed (docs/scores.md, "PortXmitWait and
  // its unit").
  const std::size_t wait = static_cast<std::size_t>(Counter::kTransmitWait);
  const XmitWaitModel wait_model(s.analysis.scores.xmit_wait);
  std::vector<XmitWaitUnit> units(s.ports.size());
  bool any_unit = false;
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const PortView& p = s.ports[i];
    if (p.present[wait] == 0 || !ctx.port_exported(i)) continue;
    units[i] =
        wait_model.resolve(f.nodes[p.node], f.nodes[p.node].ports[p.port_index], p.device_tick);
    any_unit = any_unit || units[i].seconds > 0;
  }
  if (any_unit) {
    w.family(families::kWaitSeconds);
    for (std::size_t i = 0; i < s.ports.size(); ++i) {
      if (units[i].seconds <= 0) continue;
      w.node(s.ports[i].node);
      w.sample(families::kWaitSeconds.name, ctx.port_id(i),
               static_cast<double>(s.ports[i].totals[wait]) * units[i].seconds);
    }
  }
  // Derivable in PromQL, hence opt-in: the unit is seconds / counts, W and
  // U are rates of the counters above.
  if (!ex.port_scores) return;
  if (any_unit) {
    w.family(families::kWaitUnit);
    for (std::size_t i = 0; i < s.ports.size(); ++i) {
      if (units[i].seconds <= 0) continue;
      std::string l = ctx.port_id(i);
      ExpositionWriter::add_label(l, "model", units[i].model);
      ExpositionWriter::add_label(l, "source", units[i].source);
      w.node(s.ports[i].node);
      w.sample(families::kWaitUnit.name, l, units[i].seconds);
    }
  }
  const auto& scored = s.analysis.result.ports;
  if (scored.empty()) return;
  auto per_port = [&](const MetricFamily& family, auto valid, auto value) {
    w.family(family);
    for (const PortScore& ps : scored) {
      if (!valid(ps)) continue;
      const std::int64_t i = ctx.view_of(ps.node, ps.port_index);
      if (i < 0 || !ctx.port_exported(static_cast<std::size_t>(i))) continue;
      w.node(static_cast<std::uint32_t>(ps.node));
      w.sample(family.name, ctx.port_id(static_cast<std::size_t>(i)), value(ps));
    }
  };
  per_port(
      families::kStallLast, [](const PortScore& ps) { return ps.valid; },
      [](const PortScore& ps) { return ps.stall; });
  per_port(
      families::kUtilizationLast, [](const PortScore& ps) { return ps.utilization_valid; },
      [](const PortScore& ps) { return ps.utilization; });
}

}  // namespace ibfx
