#include "exposition/render_vl_counters.h"

#include <catch2/catch.hpp>
#include <string>

#include "exposition/render_context.h"
#include "snapshot/snapshot.h"
#include "test/support/fake_fabric.h"
#include "test/support/snapshot_support.h"
#include "test/support/text_lines.h"

using namespace ibfx;

namespace {

using ibfx::test::has_line;
// Per-port series carry the lean port identity; names, type, tier and rail
// are joined from infiniband_port_info (issue #15).
const std::string kSwitchPort2 = R"(node_guid="0x0000000000000100",port="2")";
const std::string kHca = R"(node_guid="0x0000000000000201",port="1")";

std::shared_ptr<Snapshot> snapshot_with_lanes() {
  auto fabric = std::make_shared<const Fabric>(ibfx::test::star_fabric(2));
  CounterAccumulator acc;
  LaneReading r;
  const auto vl = static_cast<std::size_t>(LaneCounter::kVlXmitWait);
  const auto fecn = static_cast<std::size_t>(LaneCounter::kSlRcvFecn);
  r.bits[vl] = 16;
  r.value[vl][0] = 1000;
  r.value[vl][5] = 40;
  acc.lanes().apply(PortKey{0x100, 2}, r);
  LaneReading h;
  h.bits[fecn] = 32;
  h.value[fecn][3] = 9;
  acc.lanes().apply(PortKey{0x201, 1}, h);
  SweepResult sweep;
  sweep.nodes.resize(3, NodeSweep{.swept = true, .reached = true, .answered = true});
  auto snap = test::make_snapshot(fabric, sweep, acc, {});
  snap->lanes = lane_totals(*fabric, acc.lanes());
  return snap;
}
}  // namespace

TEST_CASE("Lane counters render per VL and SL and only the lanes in use", "[snapshot][lanes]") {
  auto snap = snapshot_with_lanes();
  snap->analysis.scores.xmit_wait.global_seconds = 0.25;  // tick_seconds (exact in binary)
  const std::string text = exposition_text(*snap);
  CHECK(
      has_line(text, "infiniband_port_vl_transmit_wait_total{" + kSwitchPort2 + ",vl=\"0\"} 1000"));
  CHECK(has_line(text, "infiniband_port_vl_transmit_wait_total{" + kSwitchPort2 + ",vl=\"5\"} 40"));
  // VLs that never stalled have no series.
  CHECK(text.find("infiniband_port_vl_transmit_wait_total{" + kSwitchPort2 + ",vl=\"1\"}") ==
        std::string::npos);
  CHECK(has_line(text, "infiniband_port_sl_receive_fecn_packets_total{" + kHca + ",sl=\"3\"} 9"));
  CHECK(text.find("# TYPE infiniband_port_vl_transmit_wait_total counter\n") != std::string::npos);
  // Stall seconds per VL: counts x the port's unit.
  CHECK(has_line(
      text, "infiniband_port_vl_transmit_wait_seconds_total{" + kSwitchPort2 + ",vl=\"0\"} 250"));
  CHECK(has_line(
      text, "infiniband_port_vl_transmit_wait_seconds_total{" + kSwitchPort2 + ",vl=\"5\"} 10"));
  // Groups nothing was read for have no family at all.
  CHECK(text.find("infiniband_port_sl_receive_becn_packets_total") == std::string::npos);
  CHECK(text.find("infiniband_port_vl_transmit_congestion_time_total") == std::string::npos);
}

TEST_CASE("Lane counters follow the export cardinality controls", "[snapshot][lanes]") {
  auto snap = snapshot_with_lanes();
  snap->exporting.hca_port_counters = false;
  std::string text = exposition_text(*snap);
  CHECK(text.find("infiniband_port_vl_transmit_wait_total{") != std::string::npos);
  CHECK(text.find("infiniband_port_sl_receive_fecn_packets_total") == std::string::npos);
  snap = snapshot_with_lanes();
  snap->exporting.port_counters = false;
  text = exposition_text(*snap);
  CHECK(text.find("infiniband_port_vl_transmit_wait_total") == std::string::npos);
}

TEST_CASE("No lane data renders nothing", "[snapshot][lanes]") {
  auto fabric = std::make_shared<const Fabric>(ibfx::test::star_fabric(2));
  auto snap = test::make_snapshot(fabric, {}, CounterAccumulator{}, {});
  std::string out;
  ExpositionWriter w(out);
  render_lane_counters(*snap, std::vector<std::string_view>(snap->ports.size()), w);
  CHECK(out.empty());
}

TEST_CASE("LaneCounterRenderer renders the lanes of the ports group with the ports' identities",
          "[snapshot][lanes]") {
  auto snap = snapshot_with_lanes();
  const LaneCounterRenderer renderer;
  CHECK(renderer.group() == RenderGroup::kPorts);
  const RenderContext ctx(*snap);
  std::string out;
  ExpositionWriter w(out);
  renderer.render(ctx, w);
  // The same text as the function it wraps, given RenderContext's port ids.
  std::string direct;
  ExpositionWriter dw(direct);
  render_lane_counters(*snap, ctx.port_ids(), dw);
  CHECK(out == direct);
  CHECK(has_line("\n" + out,
                 "infiniband_port_vl_transmit_wait_total{" + kSwitchPort2 + ",vl=\"0\"} 1000"));
  // And it is the ports group's lane section of the full exposition.
  CHECK(exposition_text(*snap).find(out) != std::string::npos);
}
