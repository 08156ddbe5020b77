#include "snapshot/snapshot.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "exposition/deflate_block_cache.h"
#include "test/support/fake_fabric.h"
#include "test/support/snapshot_support.h"
#include "test/support/text_lines.h"

using namespace ibfx;

namespace {

using ibfx::test::has_line;
// The value of one series, NaN if absent.
double value_of(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return std::nan("");
  return std::stod(text.substr(at + series.size() + 2));
}
std::shared_ptr<const Fabric> shared(Fabric f) {
  return std::make_shared<const Fabric>(std::move(f));
}
}  // namespace

TEST_CASE("Snapshot renders per-port counters with bytes = words x 4", "[snapshot]") {
  auto fabric = shared(ibfx::test::star_fabric(2));
  CounterAccumulator acc;
  CounterReading r;
  r.set(Counter::kTransmitWait, 1234, 32);
  r.set(Counter::kTransmitDataBytes, 1000, 64);
  r.set(Counter::kSymbolErrors, 3, 16);
  acc.apply(PortKey{0x100, 2}, r, {});
  SweepResult sweep;
  sweep.nodes.resize(3, NodeSweep{.swept = true, .reached = true, .answered = true});
  auto snap = test::make_snapshot(fabric, std::move(sweep), acc, {});
  const std::string& text = exposition_text(*snap);
  // Per-port series carry only the port's identity (the lean exposition).
  const std::string labels = R"(node_guid="0x0000000000000100",port="2")";
  // PortXmitWait in seconds (Quantum-class unit for this device); raw counts only on request.
  CHECK(text.find("infiniband_port_transmit_wait_seconds_total{" + labels + "} ") !=
        std::string::npos);
  CHECK(text.find("infiniband_port_transmit_wait_total") == std::string::npos);
  CHECK(has_line(text, "infiniband_port_transmit_data_bytes_total{" + labels + "} 4000"));
  CHECK(has_line(text, "infiniband_port_symbol_errors_total{" + labels + "} 3"));
  CHECK(has_line(text, "infiniband_port_errors_total{" + labels + "} 3"));
  CHECK(text.find("infiniband_port_up{") == std::string::npos);  // = state >= 2 and physical 5
  CHECK(has_line(text, "infiniband_port_state{" + labels + "} 4"));
  CHECK(has_line(text, "infiniband_port_physical_state{" + labels + "} 5"));
  CHECK(has_line(text, R"(infiniband_exporter_node_up{node_guid="0x0000000000000200"} 1)"));
  CHECK(has_line(text, R"(infiniband_port_lid{node_guid="0x0000000000000200",port="1"} 2)"));
  CHECK(has_line(text, R"(infiniband_node_lid{node_guid="0x0000000000000100"} 1)"));
  // Ports never read have no counter series, but stay visible as up/info.
  CHECK(
      text.find(R"(infiniband_port_transmit_wait_seconds_total{node_guid="0x0000000000000200")") ==
      std::string::npos);
  // Link and far end of the cable: once per port, on the port's info metric;
  // names, type, tier and rail once per node, on the node's.
  CHECK(has_line(
      text,
      R"(infiniband_port_info{node_guid="0x0000000000000200",port="1",link_width="4x",link_speed="SDR",remote_node_guid="0x0000000000000100",remote_node_name="leaf-01",remote_port="1",remote_node_type="switch",remote_tier=""} 1)"));
  CHECK(
      text.find(
          R"(infiniband_node_info{node_guid="0x0000000000000200",node_name="gpu0 mlx5_0",node_type="hca")") !=
      std::string::npos);
  // State and LID are gauges: no label changes when they do.
  CHECK(text.find("state=") == std::string::npos);
  CHECK(text.find("lid=") == std::string::npos);
}

TEST_CASE("Snapshot keeps down ports visible with their state", "[snapshot]") {
  Fabric f = ibfx::test::star_fabric(1, 1);
  auto snap = test::make_snapshot(shared(std::move(f)), {}, CounterAccumulator{}, {});
  const std::string port = R"({node_guid="0x0000000000000100",port="2"})";
  CHECK(exposition_text(*snap).find("infiniband_port_state" + port + " 1\n") != std::string::npos);
  CHECK(exposition_text(*snap).find("infiniband_port_physical_state" + port + " 2\n") !=
        std::string::npos);
  CHECK(exposition_text(*snap).find(
            R"(infiniband_port_info{node_guid="0x0000000000000100",port="2",)") !=
        std::string::npos);
}

TEST_CASE("Snapshot uses the node-name-map and escapes label values", "[snapshot]") {
  Fabric f = ibfx::test::star_fabric(1);
  f.nodes[1].description = "weird \"name\"\\x";
  NodeNameMap names{{0x100, "leaf \"A\""}};
  auto snap = test::make_snapshot(shared(std::move(f)), {}, CounterAccumulator{}, names);
  const std::string& text = exposition_text(*snap);
  CHECK(text.find(R"(node_name="leaf \"A\"")") != std::string::npos);
  CHECK(text.find(R"(node_name="weird \"name\"\\x")") != std::string::npos);
}

TEST_CASE("Snapshot gzip is the compressed text", "[snapshot]") {
  auto snap = test::make_snapshot(shared(ibfx::test::star_fabric(3)), {}, CounterAccumulator{}, {});
  CHECK(test::gzip_of(*snap).size() > 10);
  CHECK(static_cast<unsigned char>(test::gzip_of(*snap)[0]) == 0x1f);
  CHECK(static_cast<unsigned char>(test::gzip_of(*snap)[1]) == 0x8b);
  CHECK(test::gzip_of(*snap).size() < exposition_text(*snap).size());
  CHECK(ibfx::test::gunzip(test::gzip_of(*snap)) == exposition_text(*snap));
  CHECK(RenderedExposition::build(*snap).text_size() == exposition_text(*snap).size());
}

TEST_CASE("Snapshot renders the same text in pieces of any size", "[snapshot]") {
  auto snap =
      test::make_snapshot(shared(ibfx::test::star_fabric(40)), {}, CounterAccumulator{}, {});
  snap->exporter_metrics_text = "# HELP own_metric x\n# TYPE own_metric gauge\nown_metric 1\n";
  const std::string whole = exposition_text(*snap);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{100}, std::size_t{4096}}) {
    std::string joined;
    std::size_t pieces = 0;
    std::size_t biggest = 0;
    render_exposition(
        *snap,
        [&](std::string_view piece) {
          joined += piece;
          ++pieces;
          biggest = std::max(biggest, piece.size());
        },
        chunk);
    CHECK(joined == whole);
    CHECK(pieces > 1);
    // A piece ends at a line boundary after reaching the chunk size (or is
    // the daemon's own metrics, appended whole).
    CHECK(biggest < std::max(chunk, snap->exporter_metrics_text.size()) + 512);
  }
  CHECK(whole.ends_with("own_metric 1\n"));
}

TEST_CASE("Snapshot honours the cardinality controls", "[snapshot]") {
  auto fabric = shared(ibfx::test::star_fabric(2));
  CounterAccumulator acc;
  CounterReading r;
  r.set(Counter::kTransmitWait, 5, 32);
  r.set(Counter::kSymbolErrors, 1, 16);
  r.set(Counter::kTransmitDataBytes, 10, 64);
  acc.apply(PortKey{0x100, 1}, r, {});
  acc.apply(PortKey{0x200, 1}, r, {});
  SweepResult sweep;
  sweep.nodes.resize(3, NodeSweep{.swept = true, .reached = true, .answered = true});

  auto no_hca = test::make_snapshot(fabric, sweep, acc, {});
  no_hca->exporting.hca_port_counters = false;
  const std::string& t1 = exposition_text(*no_hca);
  CHECK(t1.find(R"(infiniband_port_transmit_wait_seconds_total{node_guid="0x0000000000000100")") !=
        std::string::npos);
  CHECK(t1.find(R"(infiniband_port_transmit_wait_seconds_total{node_guid="0x0000000000000200")") ==
        std::string::npos);

  auto no_errors = test::make_snapshot(fabric, sweep, acc, {});
  no_errors->exporting.error_counters = false;
  CHECK(exposition_text(*no_errors).find("infiniband_port_symbol_errors_total") ==
        std::string::npos);
  CHECK(exposition_text(*no_errors).find("infiniband_port_errors_total") == std::string::npos);
  CHECK(exposition_text(*no_errors).find("infiniband_port_transmit_data_bytes_total") !=
        std::string::npos);

  auto aggregates_only = test::make_snapshot(fabric, sweep, acc, {});
  aggregates_only->exporting.port_counters = false;
  const std::string& t3 = exposition_text(*aggregates_only);
  CHECK(t3.find("infiniband_port_transmit_wait_seconds_total") == std::string::npos);
  CHECK(t3.find("infiniband_port_symbol_errors_total") == std::string::npos);
  CHECK(t3.find("infiniband_port_state{") != std::string::npos);  // ports stay visible
}

TEST_CASE("Snapshot renders the PortXmitWait unit, utilisation and the roots of congestion",
          "[snapshot]") {
  auto fabric = shared(ibfx::test::star_fabric(2));
  CounterAccumulator acc;
  CounterReading r;
  r.set(Counter::kTransmitWait, 1000, 32);
  acc.apply(PortKey{0x100, 2}, r, {});
  SweepResult sweep;
  sweep.nodes.resize(3, NodeSweep{true, true, 0});
  auto snap = test::make_snapshot(fabric, std::move(sweep), acc, {});
  snap->exporting.port_scores = true;  // the unit and U of the last interval are opt-in
  // leaf-01 port 2 (index 1) faces "gpu1 mlx5_0": full, with two victims.
  PortScore root;
  root.node = 0;
  root.port_index = 1;
  root.valid = true;
  root.utilization_valid = true;
  root.utilization = 0.75;
  AnalysisResult& result = snap->analysis.result;
  result.ports.push_back(root);
  result.congestion.roots.push_back({0, CongestionCause::kIncast, 2.5, 2});
  result.congestion.imbalance.push_back({0, 2, 1.5});
  snap->analysis.utilization_histograms[{Tier::kLeaf, 0}].observe(0.75);
  const std::string text = exposition_text(*snap);
  const std::string labels = R"(node_guid="0x0000000000000100",port="2")";
  // Roots are few and read without a join: they keep the names.
  const std::string named =
      R"(node_guid="0x0000000000000100",node_name="leaf-01",node_type="switch",port="2",tier="",rail="")";
  // No known device: IBA's 8 bytes per lane per count over 4x SDR's 4 x 2 Gb/s.
  CHECK(value_of(text, "infiniband_port_transmit_wait_unit_seconds{" + labels +
                           R"(,model="iba",source="iba_default"})") == Approx(32e-9));
  CHECK(value_of(text, "infiniband_port_transmit_wait_seconds_total{" + labels + "}") ==
        Approx(1000 * 32e-9));
  CHECK(value_of(text, "infiniband_port_rate_bytes_per_second{" + labels + "}") == Approx(1e9));
  CHECK(has_line(text, "infiniband_port_utilization_last{" + labels + "} 0.75"));
  CHECK(has_line(text, R"(infiniband_port_utilization_bucket{tier="leaf",rail="0",le="0.7"} 0)"));
  CHECK(has_line(text, R"(infiniband_port_utilization_bucket{tier="leaf",rail="0",le="0.8"} 1)"));
  const std::string root_labels =
      named +
      R"(,cause="incast",remote_node_guid="0x0000000000000201",remote_node_name="gpu1 mlx5_0",remote_port="1")";
  CHECK(has_line(text, "infiniband_congestion_root_score{" + root_labels + "} 2.5"));
  CHECK(has_line(text, "infiniband_congestion_victim_ports{" + root_labels + "} 2"));
  // Per-switch aggregates: node_guid only (the name is on infiniband_node_info).
  CHECK(
      has_line(text, R"(infiniband_switch_uplink_imbalance{node_guid="0x0000000000000100"} 1.5)"));
}

TEST_CASE("Snapshots of the same data compressed with one cache: the same bytes, all reused",
          "[snapshot][deflate_cache]") {
  // 250 HCAs, every port with counters: ~0.5 MB of text, more than one block.
  auto fabric = shared(ibfx::test::star_fabric(250));
  CounterAccumulator acc;
  auto read_all = [&](std::uint64_t base) {
    for (const FabricNode& n : fabric->nodes) {
      for (const FabricPort& p : n.ports) {
        CounterReading r;
        r.set(Counter::kTransmitWait, base + n.guid + p.number, 32);
        r.set(Counter::kTransmitDataBytes, base * 7 + n.guid, 64);
        r.set(Counter::kReceiveDataBytes, base * 5 + p.number, 64);
        r.set(Counter::kSymbolErrors, 3, 16);
        acc.apply(PortKey{n.guid, p.number}, r, {});
      }
    }
  };
  read_all(1000);
  auto sweep = [&] {
    SweepResult s;
    s.nodes.resize(fabric->nodes.size(),
                   NodeSweep{.swept = true, .reached = true, .answered = true});
    return s;
  };
  const auto first = test::make_snapshot(fabric, sweep(), acc, {});
  const auto second = test::make_snapshot(fabric, sweep(), acc, {});
  REQUIRE(exposition_text(*first).size() > 2 * kDeflateBlockBytes);

  DeflateBlockCache cache;
  const RenderedExposition r1 = RenderedExposition::build(*first, &cache);
  const RenderedExposition::Stats a = r1.stats();
  CHECK(a.reused_bytes == 0);
  CHECK(a.deflated_bytes == r1.text_size());
  const RenderedExposition r2 = RenderedExposition::build(*second, &cache);
  const RenderedExposition::Stats b = r2.stats();
  CHECK(b.deflated_bytes == 0);
  CHECK(b.reused_bytes == r2.text_size());
  CHECK(test::gzip_member(r2.runs()) == test::gzip_member(r1.runs()));
  CHECK(test::gunzip(test::gzip_member(r2.runs())) == exposition_text(*first));
  // Without a cache: the same bytes again.
  const auto plain = test::make_snapshot(fabric, sweep(), acc, {});
  const RenderedExposition r3 = RenderedExposition::build(*plain);
  CHECK(test::gzip_member(r3.runs()) == test::gzip_member(r1.runs()));
  CHECK(r3.stats().reused_bytes == 0);

  // The next sweep's counters all rose: the counter families are deflated
  // again, what did not change (info, states, LIDs, error counters) is not.
  read_all(2000);
  const auto next = test::make_snapshot(fabric, sweep(), acc, {});
  const RenderedExposition r4 = RenderedExposition::build(*next, &cache);
  const RenderedExposition::Stats c = r4.stats();
  CHECK(c.deflated_bytes > 0);
  CHECK(c.reused_bytes > 0);
  CHECK(c.reused_bytes + c.deflated_bytes == r4.text_size());
  CHECK(test::gunzip(test::gzip_member(r4.runs())) == exposition_text(*next));
}

TEST_CASE("build_snapshot takes everything it shows as inputs and is complete when it returns",
          "[snapshot]") {
  auto fabric = shared(ibfx::test::star_fabric(2));
  CounterAccumulator acc;
  CounterReading r;
  r.set(Counter::kTransmitWait, 10, 32);
  acc.apply(PortKey{0x100, 2}, r, {});
  SweepResult sweep;
  sweep.ports_read = 1;
  sweep.nodes.resize(2, NodeSweep{.swept = true, .reached = true, .answered = true});
  sweep.port_read.resize(2);

  SnapshotInputs in;
  in.fabric = fabric;
  in.sweep = &sweep;
  in.accumulator = &acc;
  in.node_names = node_display_names(*fabric, NodeNameMap{{0x100, "leaf-A"}});
  in.device_ticks = {7, -1};  // shorter than the node list: the rest unknown
  in.analysis.interval_seconds = 2.5;
  in.analysis.topology = std::make_shared<const Topology>();
  in.exporting.port_scores = true;
  in.exporter_metrics_text = "own 1\n";
  in.sweep_timestamp_seconds = 1234.5;
  const std::shared_ptr<const Snapshot> snap = build_snapshot(std::move(in));

  CHECK(snap->fabric == fabric);
  REQUIRE(snap->node_names.size() == fabric->nodes.size());
  CHECK(snap->node_names[0] == "leaf-A");                      // the node-name-map
  CHECK(snap->node_names[1] == fabric->nodes[1].description);  // else NodeDescription
  CHECK(snap->node_status.size() == fabric->nodes.size());     // padded to the fabric
  CHECK(snap->sweep_totals.ports_read == 1);
  CHECK(snap->ports.size() == fabric->port_count());
  for (const PortView& v : snap->ports) {
    CHECK(v.device_tick == (v.node == 0 ? 7 : -1));  // the node's tick, on every port
    const bool read = fabric->nodes[v.node].guid == 0x100 &&
                      fabric->nodes[v.node].ports[v.port_index].number == 2;
    CHECK(v.has_counters == read);
  }
  CHECK(snap->analysis.interval_seconds == 2.5);
  CHECK(snap->exporting.port_scores);
  CHECK(snap->exporter_metrics_text == "own 1\n");
  CHECK(snap->sweep_timestamp_seconds == 1234.5);
  // No fabric yet: the daemon's own health only, stamped now.
  SweepResult none;
  SnapshotInputs empty;
  empty.sweep = &none;
  empty.accumulator = &acc;
  const auto first = build_snapshot(std::move(empty));
  CHECK(first->fabric == nullptr);
  CHECK(first->ports.empty());
  CHECK(first->sweep_timestamp_seconds > 1.7e9);
}
