#include "exposition/render_vl_counters.h"

#include <array>

#include "analysis/xmit_wait_model.h"
#include "exposition/counter_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {
namespace {

constexpr std::array<const char*, kLanes> kLaneNames = {
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"};

}  // namespace

void render_lane_counters(const Snapshot& s, const std::vector<std::string_view>& port_labels,
                          ExpositionWriter& w) {
  if (s.lanes.empty() || !s.fabric) return;
  const Fabric& fabric = *s.fabric;
  const ExportConfig& ex = s.exporting;
  auto exported = [&](const PortLaneTotals& t) {
    if (t.port >= s.ports.size() || t.port >= port_labels.size()) return false;
    const PortView& p = s.ports[t.port];
    return ex.port_counters &&
           (ex.hca_port_counters || fabric.nodes[p.node].type != NodeType::kHca);
  };
  auto any_nonzero = [](const PortLaneTotals& t) {
    for (const std::uint64_t v : t.total) {
      if (v != 0) return true;
    }
    return false;
  };

  for (std::size_t c = 0; c < kLaneCounterCount; ++c) {
    const auto counter = static_cast<LaneCounter>(c);
    const LaneCounterInfo& info = lane_counter_info(counter);
    const MetricFamily& family = lane_counter_family(counter);
    bool any = false;
    for (const PortLaneTotals& t : s.lanes) {
      any = any || (t.counter == counter && exported(t) && any_nonzero(t));
    }
    if (!any) continue;
    w.family(family);
    for (const PortLaneTotals& t : s.lanes) {
      if (t.counter != counter || !exported(t)) continue;
      w.node(s.ports[t.port].node);  // for ?node= slices
      for (std::size_t lane = 0; lane < info.lanes; ++lane) {
        if (t.total[lane] == 0) continue;  // a lane never used has no series
        w.sample(family.name, port_labels[t.port], info.label, kLaneNames[lane],
                 static_cast<double>(t.total[lane]));
      }
    }
  }

  // PortVLXmitWait counts in the same ticks as PortXmitWait (IBA 16.1.4.10):
  // seconds of stall per VL with the port's unit (docs/scores.md).
  const XmitWaitModel model(s.analysis.scores.xmit_wait);
  constexpr const char* kSeconds = "infiniband_port_vl_transmit_wait_seconds_total";
  bool family_written = false;
  for (const PortLaneTotals& t : s.lanes) {
    if (t.counter != LaneCounter::kVlXmitWait || !exported(t) || !any_nonzero(t)) continue;
    const PortView& p = s.ports[t.port];
    const XmitWaitUnit unit = model.resolve(
        fabric.nodes[p.node], fabric.nodes[p.node].ports[p.port_index], p.device_tick);
    if (unit.seconds <= 0) continue;
    if (!family_written) {
      w.family(kSeconds,
               "PortVLXmitWait converted to seconds of stall per VL (counts x "
               "infiniband_port_transmit_wait_unit_seconds, docs/scores.md).",
               "counter");
      family_written = true;
    }
    w.node(p.node);
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      if (t.total[lane] == 0) continue;
      w.sample(kSeconds, port_labels[t.port], "vl", kLaneNames[lane],
               static_cast<double>(t.total[lane]) * unit.seconds);
    }
  }
}

RenderGroup LaneCounterRenderer::group() const { return RenderGroup::kPorts; }

void LaneCounterRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  if (ctx.snapshot().lanes.empty()) return;  // every opt-in group off
  render_lane_counters(ctx.snapshot(), ctx.port_ids(), w);
}

}  // namespace ibfx
