#include "exposition/render_port_counters.h"

#include "analysis/xmit_wait_model.h"
#include "exposition/counter_families.h"
#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {
namespace {

constexpr auto kWait = static_cast<std::size_t>(Counter::kTransmitWait);
constexpr auto kFirstError = static_cast<std::size_t>(Counter::kSymbolErrors);
// The PortCounters error counters (IBA 16.1.3.5) whose sum is
// infiniband_port_errors_total; the detail attributes after them break
// PortRcvErrors and PortXmitDiscards down and would count twice.
constexpr auto kLastError = static_cast<std::size_t>(Counter::kQp1Dropped);

// The seconds one PortXmitWait count stands for on each port's device,
// width and speed (docs/scores.md, "PortXmitWait and its unit").
struct WaitUnits {
  std::vector<XmitWaitUnit> units;  // by port view; seconds 0: unknown
  bool any = false;                 // some port's unit is known
};

WaitUnits wait_units(const RenderContext& ctx) {
  const Snapshot& s = ctx.snapshot();
  const Fabric& f = ctx.fabric();
  const XmitWaitModel wait_model(s.analysis.scores.xmit_wait);
  WaitUnits out{std::vector<XmitWaitUnit>(s.ports.size()), false};
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const PortView& p = s.ports[i];
    if (p.present[kWait] == 0 || !ctx.port_exported(i)) continue;
    out.units[i] =
        wait_model.resolve(f.nodes[p.node], f.nodes[p.node].ports[p.port_index], p.device_tick);
    out.any = out.any || out.units[i].seconds > 0;
  }
  return out;
}

// Which series of counter c port i has, as one bit per counter and port,
// worked out in one pass over the ports: the families are written
// counter by counter, and asking every port's view (~330 bytes) again
// for each of the 35 counters streamed the whole table through the cache
// 35 times a render. Error counters are sparse by default: a port's
// counter appears once it has counted (totals only grow, so it never
// disappears again); absent means zero. infiniband_port_errors_total
// is always there for the first one.
struct ShownCounters {
  std::vector<std::uint64_t> by_port;
  std::uint64_t any = 0;  // counters some port shows
};

ShownCounters shown_counters(const RenderContext& ctx, const WaitUnits& wait) {
  const Snapshot& s = ctx.snapshot();
  const ExportConfig& ex = s.exporting;
  static_assert(kCounterCount <= 64, "one bit per counter");
  ShownCounters shown{std::vector<std::uint64_t>(s.ports.size(), 0), 0};
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const PortView& p = s.ports[i];
    if (!ctx.port_exported(i)) continue;
    std::uint64_t bits = 0;
    for (std::size_t c = 0; c < kCounterCount; ++c) {
      if (p.present[c] == 0) continue;
      const bool on = c == kWait ? ex.raw_transmit_wait || wait.units[i].seconds <= 0
                                 : c < kFirstError || ex.zero_error_counters || p.totals[c] != 0;
      bits |= std::uint64_t{on} << c;
    }
    shown.by_port[i] = bits;
    shown.any |= bits;
  }
  return shown;
}

// Every entry of the counter table, whatever it is: a counter added to
// the table shows up here.
void write_counter_families(const RenderContext& ctx, const ShownCounters& shown,
                            ExpositionWriter& w) {
  const Snapshot& s = ctx.snapshot();
  const ExportConfig& ex = s.exporting;
  for (std::size_t c = 0; c < kCounterCount; ++c) {
    const bool error = c >= kFirstError;
    const bool traffic = !error && c != kWait;
    if ((error && !ex.error_counters) || (traffic && !ex.traffic_counters)) continue;
    const std::uint64_t bit = std::uint64_t{1} << c;
    if ((shown.any & bit) == 0) continue;
    const MetricFamily& family = counter_family(c);
    const std::uint64_t scale = counter_info(c).scale;
    w.family(family);
    for (std::size_t i = 0; i < s.ports.size(); ++i) {
      if ((shown.by_port[i] & bit) == 0) continue;
      w.node(s.ports[i].node);
      w.sample(family.name, ctx.port_id(i), s.ports[i].totals[c] * scale);
    }
  }
}

// infiniband_port_errors_total: the sum of kFirstError..kLastError of each
// port that has any of them.
void write_port_errors(const RenderContext& ctx, ExpositionWriter& w) {
  const Snapshot& s = ctx.snapshot();
  bool family_written = false;
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const PortView& p = s.ports[i];
    if (!ctx.port_exported(i)) continue;
    bool any = false;
    std::uint64_t sum = 0;
    for (std::size_t c = kFirstError; c <= kLastError; ++c) {
      any = any || p.present[c] != 0;
      sum += p.totals[c];
    }
    if (!any) continue;
    if (!family_written) w.family(families::kPortErrors);
    family_written = true;
    w.node(p.node);
    w.sample(families::kPortErrors.name, ctx.port_id(i), sum);
  }
}

// PortXmitWait in seconds, on the ports whose unit is known.
void write_wait_seconds(const RenderContext& ctx, const WaitUnits& wait, ExpositionWriter& w) {
  const Snapshot& s = ctx.snapshot();
  w.family(families::kWaitSeconds);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    if (wait.units[i].seconds <= 0) continue;
    w.node(s.ports[i].node);
    w.sample(families::kWaitSeconds.name, ctx.port_id(i),
             static_cast<double>(s.ports[i].totals[kWait]) * wait.units[i].seconds);
  }
}

// The seconds per PortXmitWait count, with the rule and where it came from.
void write_wait_unit(const RenderContext& ctx, const WaitUnits& wait, ExpositionWriter& w) {
  const Snapshot& s = ctx.snapshot();
  w.family(families::kWaitUnit);
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    if (wait.units[i].seconds <= 0) continue;
    std::string l(ctx.port_id(i));
    ExpositionWriter::add_label(l, "model", wait.units[i].model);
    ExpositionWriter::add_label(l, "source", wait.units[i].source);
    w.node(s.ports[i].node);
    w.sample(families::kWaitUnit.name, l, wait.units[i].seconds);
  }
}

// The last sweep's W and U of each exported port the analysis scored.
void write_port_scores(const RenderContext& ctx, ExpositionWriter& w) {
  const auto& scored = ctx.snapshot().analysis.result.ports;
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

}  // namespace

RenderGroup PortCounterRenderer::group() const { return RenderGroup::kPorts; }

void PortCounterRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const ExportConfig& ex = ctx.snapshot().exporting;
  const WaitUnits wait = wait_units(ctx);
  write_counter_families(ctx, shown_counters(ctx, wait), w);
  if (ex.error_counters) write_port_errors(ctx, w);
  if (wait.any) write_wait_seconds(ctx, wait, w);
  // Derivable in PromQL, hence opt-in: the unit is seconds / counts, W and
  // U are rates of the counters above.
  if (!ex.port_scores) return;
  if (wait.any) write_wait_unit(ctx, wait, w);
  write_port_scores(ctx, w);
}

}  // namespace ibfx
