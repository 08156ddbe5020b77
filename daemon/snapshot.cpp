#include "daemon/snapshot.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "daemon/gzip.h"
#include "daemon/render_vl_counters.h"

namespace ibfx {
namespace {

std::string port_state_name(std::uint8_t state) {
  switch (state) {
    case 1:
      return "down";
    case 2:
      return "init";
    case 3:
      return "armed";
    case 4:
      return "active";
    default:
      return "unknown";
  }
}

template <typename TierOf, typename RailOf, typename PortExported>
void render_analysis(const Snapshot& s, const std::vector<std::string>& port_labels,
                     const std::vector<std::string>& node_labels, const TierOf& tier_of,
                     const RailOf& rail_of, const PortExported& port_exported,
                     ExpositionWriter& w) {
  const Fabric& fabric = *s.fabric;
  const SnapshotAnalysis& a = s.analysis;
  const std::size_t wait = static_cast<std::size_t>(Counter::kTransmitWait);

  // Stall seconds: PortXmitWait counts x the seconds one count stands for on
  // that port's device, width and speed (docs/scores.md, "PortXmitWait and
  // its unit"); the assumption itself is exported beside it.
  const XmitWaitModel wait_model(a.scores.xmit_wait);
  std::vector<XmitWaitUnit> units(s.ports.size());
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const PortView& p = s.ports[i];
    if (p.present[wait] == 0 || !port_exported(p)) continue;
    units[i] = wait_model.resolve(fabric.nodes[p.node], fabric.nodes[p.node].ports[p.port_index],
                                  p.device_tick);
  }
  w.family("infiniband_port_transmit_wait_seconds_total",
           "PortXmitWait converted to seconds of stall (counts x "
           "infiniband_port_transmit_wait_unit_seconds, docs/scores.md).",
           "counter");
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    if (units[i].seconds <= 0) continue;
    w.sample("infiniband_port_transmit_wait_seconds_total", port_labels[i],
             static_cast<double>(s.ports[i].totals[wait]) * units[i].seconds);
  }
  w.family("infiniband_port_transmit_wait_unit_seconds",
           "Seconds of stall one PortXmitWait count stands for on this port (bytes lost per "
           "count / the link's data rate); model: quantum (8 B per port), switch-ib (32 B per "
           "lane), iba (Tick+1 B per lane), seconds (configured); source: where the "
           "assumption came from.",
           "gauge");
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    if (units[i].seconds <= 0) continue;
    std::string l = port_labels[i];
    ExpositionWriter::add_label(l, "model", units[i].model);
    ExpositionWriter::add_label(l, "source", units[i].source);
    w.sample("infiniband_port_transmit_wait_unit_seconds", l, units[i].seconds);
  }

  auto histogram = [&](const char* name, const auto& histograms) {
    const std::string bucket = std::string(name) + "_bucket";
    for (const auto& [key, h] : histograms) {
      std::string l;
      ExpositionWriter::add_label(l, "tier", tier_name(key.first));
      ExpositionWriter::add_label(l, "rail",
                                  key.second == kNoRail ? "" : std::to_string(key.second));
      std::uint64_t cumulative = 0;
      char le[32];
      for (std::size_t b = 0; b < h.kBounds.size(); ++b) {
        cumulative += h.buckets[b];
        std::snprintf(le, sizeof le, "%g", h.kBounds[b]);
        w.sample(bucket, l, "le", le, static_cast<double>(cumulative));
      }
      w.sample(bucket, l, "le", "+Inf", static_cast<double>(h.count));
      w.sample(std::string(name) + "_sum", l, h.sum);
      w.sample(std::string(name) + "_count", l, h.count);
    }
  };
  w.family("infiniband_port_stall_ratio",
           "Per-port stall ratio W (stall seconds per second) per sweep interval; one "
           "observation per port per sweep.",
           "histogram");
  histogram("infiniband_port_stall_ratio", a.histograms);
  w.family("infiniband_port_utilization",
           "Per-port utilisation U (transmitted bytes per second / the link's data rate) per "
           "sweep interval; one observation per port per sweep.",
           "histogram");
  histogram("infiniband_port_utilization", a.utilization_histograms);
  w.family("infiniband_exporter_stall_ratio_clamped_total",
           "Stall ratios outside [0, 1] (impossible: wrong tick length or counter glitch), "
           "clamped.",
           "counter");
  w.sample("infiniband_exporter_stall_ratio_clamped_total", "", a.clamped_total);

  if (a.result.ports.empty()) return;
  // Index of each (node, port index) in the port view list, for labels.
  std::map<std::pair<std::int32_t, std::uint32_t>, std::size_t> view;
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    view[{static_cast<std::int32_t>(s.ports[i].node), s.ports[i].port_index}] = i;
  }
  w.family("infiniband_port_stall_ratio_last",
           "Stall ratio W of the port over the last sweep interval.", "gauge");
  for (const PortScore& ps : a.result.ports) {
    if (!ps.valid) continue;
    auto it = view.find({ps.node, ps.port_index});
    if (it != view.end() && port_exported(s.ports[it->second])) {
      w.sample("infiniband_port_stall_ratio_last", port_labels[it->second], ps.stall);
    }
  }

  w.family("infiniband_port_utilization_last",
           "Utilisation U of the port over the last sweep interval: transmitted bytes per "
           "second / the link's data rate.",
           "gauge");
  for (const PortScore& ps : a.result.ports) {
    if (!ps.utilization_valid) continue;
    auto it = view.find({ps.node, ps.port_index});
    if (it != view.end() && port_exported(s.ports[it->second])) {
      w.sample("infiniband_port_utilization_last", port_labels[it->second], ps.utilization);
    }
  }

  // Roots of congestion: labels of the root port, its cause and the other
  // end of its cable (where the victims' traffic was going).
  const CongestionForest& forest = a.result.congestion;
  std::vector<std::string> root_labels;
  for (const CongestionRoot& r : forest.roots) {
    const PortScore& ps = a.result.ports[r.port];
    auto it = view.find({ps.node, ps.port_index});
    if (it == view.end()) continue;
    std::string l = port_labels[it->second];
    const FabricPort& fp = fabric.nodes[static_cast<std::size_t>(ps.node)].ports[ps.port_index];
    const bool linked =
        fp.linked() && static_cast<std::size_t>(fp.remote_node) < fabric.nodes.size();
    ExpositionWriter::add_label(l, "cause", cause_name(r.cause));
    // The GUID keys the drill-down: switches without a node-name-map share
    // one description.
    ExpositionWriter::add_label(
        l, "remote_node_guid",
        linked ? guid_hex(fabric.nodes[static_cast<std::size_t>(fp.remote_node)].guid) : "");
    ExpositionWriter::add_label(
        l, "remote_node_name",
        linked ? s.node_names[static_cast<std::size_t>(fp.remote_node)] : "");
    ExpositionWriter::add_label(l, "remote_port", linked ? std::to_string(fp.remote_port) : "");
    root_labels.push_back(std::move(l));
  }
  w.family("infiniband_congestion_root_score",
           "Top-K roots of congestion: max(W, U) of the root port plus the stall ratio W of "
           "every stalled port whose wait chains back to it (docs/scores.md, \"Root or "
           "victim\").",
           "gauge");
  for (std::size_t i = 0; i < root_labels.size(); ++i) {
    w.sample("infiniband_congestion_root_score", root_labels[i], forest.roots[i].score);
  }
  w.family("infiniband_congestion_victim_ports",
           "Stalled ports whose wait is attributed to this root of congestion.", "gauge");
  for (std::size_t i = 0; i < root_labels.size(); ++i) {
    w.sample("infiniband_congestion_victim_ports", root_labels[i],
             static_cast<std::uint64_t>(forest.roots[i].victims));
  }
  w.family("infiniband_switch_uplink_imbalance",
           "Per switch with two or more up ports: max over mean of their transmitted bytes in "
           "the last interval (1: evenly spread).",
           "gauge");
  for (const UplinkImbalance& u : forest.imbalance) {
    std::string l = node_labels[static_cast<std::size_t>(u.node)];
    ExpositionWriter::add_label(l, "tier", tier_of(static_cast<std::size_t>(u.node)));
    ExpositionWriter::add_label(l, "rail", rail_of(static_cast<std::size_t>(u.node)));
    w.sample("infiniband_switch_uplink_imbalance", l, u.ratio);
  }

  w.family("infiniband_hotspot_score",
           "How far a switch (port=\"\") or one of the top-K ports stands out from its peers "
           "(same tier, rail, direction): robust z-score of W (docs/scores.md).",
           "gauge");
  for (const SwitchScore& sw : a.result.switches) {
    std::string l = node_labels[static_cast<std::size_t>(sw.node)];
    ExpositionWriter::add_label(l, "port", "");
    ExpositionWriter::add_label(l, "tier", tier_of(static_cast<std::size_t>(sw.node)));
    ExpositionWriter::add_label(l, "rail", rail_of(static_cast<std::size_t>(sw.node)));
    w.sample("infiniband_hotspot_score", l, sw.score);
  }
  for (std::size_t k : a.result.top_ports) {
    const PortScore& ps = a.result.ports[k];
    auto it = view.find({ps.node, ps.port_index});
    if (it != view.end()) w.sample("infiniband_hotspot_score", port_labels[it->second], ps.score);
  }

  w.family("infiniband_tail_latency_score",
           "Heaviness of the stall tail per tier and rail: p99(W) / max(p50(W), floor).", "gauge");
  for (const TailScore& t : a.result.tails) {
    std::string l;
    ExpositionWriter::add_label(l, "tier", tier_name(t.tier));
    ExpositionWriter::add_label(l, "rail", t.rail == kNoRail ? "" : std::to_string(t.rail));
    w.sample("infiniband_tail_latency_score", l, t.ratio);
  }
  // A "quantile" label is reserved for summaries, hence "percentile".
  w.family("infiniband_stall_ratio_percentile",
           "p50 and p99 of the per-port stall ratio per tier and rail, last interval.", "gauge");
  for (const TailScore& t : a.result.tails) {
    std::string l;
    ExpositionWriter::add_label(l, "tier", tier_name(t.tier));
    ExpositionWriter::add_label(l, "rail", t.rail == kNoRail ? "" : std::to_string(t.rail));
    w.sample("infiniband_stall_ratio_percentile", l, "percentile", "50", t.p50);
    w.sample("infiniband_stall_ratio_percentile", l, "percentile", "99", t.p99);
  }
  w.family("infiniband_worst_path_stalled_seconds",
           "Upper bound of the stall added on the worst path (sum of W x interval over its "
           "egress ports), fabric-wide (rail=\"\") and per rail.",
           "gauge");
  for (const WorstPath& p : a.result.worst_paths) {
    std::string l;
    ExpositionWriter::add_label(l, "rail", p.rail == kNoRail ? "" : std::to_string(p.rail));
    w.sample("infiniband_worst_path_stalled_seconds", l, p.stalled_seconds);
  }

  const double dt = a.interval_seconds > 0 ? a.interval_seconds : 1.0;
  auto aggregates = [&](const char* scope, const std::vector<Aggregate>& list, auto labels_of) {
    const std::string mean = std::string("infiniband_") + scope + "_stall_ratio_mean";
    const std::string max = std::string("infiniband_") + scope + "_stall_ratio_max";
    const std::string bytes = std::string("infiniband_") + scope + "_transmit_bytes_per_second";
    const std::string errors = std::string("infiniband_") + scope + "_errors_per_second";
    w.family(mean, std::string("Mean stall ratio W over the ports of each ") + scope + ".", "gauge");
    for (const auto& g : list) w.sample(mean, labels_of(g), g.mean_stall);
    w.family(max, std::string("Max stall ratio W over the ports of each ") + scope + ".", "gauge");
    for (const auto& g : list) w.sample(max, labels_of(g), g.max_stall);
    w.family(bytes, std::string("Bytes transmitted per second by the ports of each ") + scope + ".",
             "gauge");
    for (const auto& g : list) w.sample(bytes, labels_of(g), static_cast<double>(g.xmit_bytes) / dt);
    w.family(errors, std::string("Error counter increments per second on the ports of each ") + scope +
                         ".",
             "gauge");
    for (const auto& g : list) w.sample(errors, labels_of(g), static_cast<double>(g.errors) / dt);
  };
  aggregates("rail", a.result.by_rail, [](const Aggregate& g) {
    std::string l;
    ExpositionWriter::add_label(l, "rail", std::to_string(g.rail));
    return l;
  });
  aggregates("tier", a.result.by_tier, [](const Aggregate& g) {
    std::string l;
    ExpositionWriter::add_label(l, "tier", tier_name(g.tier));
    return l;
  });
  // One series per switch with its tier and rail: a rail x leaf grid needs
  // no PromQL join.
  aggregates("switch", a.result.by_switch, [&](const Aggregate& g) {
    std::string l = node_labels[static_cast<std::size_t>(g.node)];
    ExpositionWriter::add_label(l, "tier", tier_of(static_cast<std::size_t>(g.node)));
    ExpositionWriter::add_label(l, "rail", rail_of(static_cast<std::size_t>(g.node)));
    return l;
  });
}

void render_topology(const Snapshot& s, const std::vector<std::string>& node_labels,
                     ExpositionWriter& w) {
  if (!s.topology) return;
  const Topology& t = *s.topology;
  const Fabric& f = *s.fabric;
  std::map<int, std::uint64_t> per_rail;
  for (const MiscabledHca& m : t.miscabled) ++per_rail[m.actual_rail];
  w.family("infiniband_rail_miscabled_ports",
           "HCA ports cabled to a leaf of another rail, by the leaf's rail.", "gauge");
  for (const auto& [rail, n] : per_rail) {
    std::string l;
    ExpositionWriter::add_label(l, "rail", std::to_string(rail));
    w.sample("infiniband_rail_miscabled_ports", l, n);
  }
  w.family("infiniband_rail_miscabled_port_info",
           "A miscabled HCA port: its rail, the rail of the leaf it is plugged into; value 1.",
           "gauge");
  for (const MiscabledHca& m : t.miscabled) {
    std::string l = node_labels[static_cast<std::size_t>(m.hca_node)];
    ExpositionWriter::add_label(l, "port", std::to_string(m.hca_port));
    ExpositionWriter::add_label(l, "switch_guid", guid_hex(f.nodes[static_cast<std::size_t>(m.switch_node)].guid));
    ExpositionWriter::add_label(l, "switch_name", s.node_names[static_cast<std::size_t>(m.switch_node)]);
    ExpositionWriter::add_label(l, "switch_port", std::to_string(m.switch_port));
    ExpositionWriter::add_label(l, "expected_rail", std::to_string(m.expected_rail));
    ExpositionWriter::add_label(l, "actual_rail", std::to_string(m.actual_rail));
    w.sample("infiniband_rail_miscabled_port_info", l, std::uint64_t{1});
  }
  w.family("infiniband_switch_single_rail",
           "Spines and cores whose leaves all serve one rail; value is that rail.", "gauge");
  for (std::size_t n = 0; n < t.single_rail.size() && n < f.nodes.size(); ++n) {
    if (t.single_rail[n] == kNoRail || t.tier[n] == Tier::kLeaf || t.tier[n] == Tier::kHca) continue;
    w.sample("infiniband_switch_single_rail", node_labels[n], static_cast<std::uint64_t>(t.single_rail[n]));
  }
}

void render_fabric(const Snapshot& s, ExpositionWriter& w) {
  if (!s.fabric) return;
  const Fabric& fabric = *s.fabric;

  // Labels shared by every series of a node, built once per render.
  std::vector<std::string> node_labels(fabric.nodes.size());
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    std::string& l = node_labels[n];
    ExpositionWriter::add_label(l, "node_guid", guid_hex(fabric.nodes[n].guid));
    ExpositionWriter::add_label(l, "node_name", s.node_names[n]);
    ExpositionWriter::add_label(l, "node_type", node_type_name(fabric.nodes[n].type));
  }
  const Topology* topo = s.topology.get();
  auto tier_of = [&](std::size_t n) -> std::string_view {
    return topo != nullptr && n < topo->tier.size() ? tier_name(topo->tier[n]) : "";
  };
  auto rail_of = [&](std::size_t n) -> std::string {
    if (topo == nullptr || n >= topo->rail.size() || topo->rail[n] == kNoRail) return "";
    return std::to_string(topo->rail[n]);
  };
  std::vector<std::string> port_labels(s.ports.size());
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const PortView& p = s.ports[i];
    port_labels[i] = node_labels[p.node];
    ExpositionWriter::add_label(
        port_labels[i], "port",
        std::to_string(fabric.nodes[p.node].ports[p.port_index].number));
    ExpositionWriter::add_label(port_labels[i], "tier", tier_of(p.node));
    ExpositionWriter::add_label(port_labels[i], "rail", rail_of(p.node));
  }

  w.family("infiniband_node_info", "Discovered InfiniBand nodes; value is always 1.", "gauge");
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const FabricNode& node = fabric.nodes[n];
    std::string l = node_labels[n];
    char hex[16];
    ExpositionWriter::add_label(l, "node_description", node.description);
    ExpositionWriter::add_label(l, "lid", std::to_string(node.lid));
    std::snprintf(hex, sizeof hex, "0x%06x", node.vendor_id);
    ExpositionWriter::add_label(l, "vendor_id", hex);
    std::snprintf(hex, sizeof hex, "0x%04x", node.device_id);
    ExpositionWriter::add_label(l, "device_id", hex);
    ExpositionWriter::add_label(l, "num_ports", std::to_string(node.num_ports));
    ExpositionWriter::add_label(l, "tier", tier_of(n));
    ExpositionWriter::add_label(l, "rail", rail_of(n));
    w.sample("infiniband_node_info", l, std::uint64_t{1});
  }

  render_topology(s, node_labels, w);

  w.family("infiniband_exporter_node_up",
           "Whether the node answered PMA queries when last asked (1) or was asked and "
           "answered none (0).",
           "gauge");
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    // A node the last discovery missed is still swept and says itself
    // whether it is there; one that cannot be asked (no LID) shows as down.
    const bool present = fabric.nodes[n].present;
    const NodeSweep& status = s.node_status[n];
    if (present && !status.swept) continue;
    w.sample("infiniband_exporter_node_up", node_labels[n],
             std::uint64_t{status.swept && status.answered ? 1u : 0u});
  }

  w.family("infiniband_port_up", "Whether the port's link is up (PortState >= Init and LinkUp).",
           "gauge");
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const FabricPort& fp = fabric.nodes[s.ports[i].node].ports[s.ports[i].port_index];
    w.sample("infiniband_port_up", port_labels[i], std::uint64_t{fp.up() ? 1u : 0u});
  }

  w.family("infiniband_port_info",
           "Port link properties and the remote end of its cable; value is always 1.", "gauge");
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const FabricPort& fp = fabric.nodes[s.ports[i].node].ports[s.ports[i].port_index];
    std::string l = port_labels[i];
    ExpositionWriter::add_label(l, "state", port_state_name(fp.state));
    ExpositionWriter::add_label(l, "link_width", link_width_name(fp.width_active));
    ExpositionWriter::add_label(l, "link_speed", link_speed_name(fp));
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", link_rate_gbps(fp));
    ExpositionWriter::add_label(l, "rate_gbps", fp.width_active != 0 ? rate : "");
    ExpositionWriter::add_label(l, "lid", std::to_string(fp.lid));
    if (fp.linked()) {
      const auto r = static_cast<std::size_t>(fp.remote_node);
      ExpositionWriter::add_label(l, "remote_node_guid", guid_hex(fabric.nodes[r].guid));
      ExpositionWriter::add_label(l, "remote_node_name", s.node_names[r]);
      ExpositionWriter::add_label(l, "remote_node_type", node_type_name(fabric.nodes[r].type));
      ExpositionWriter::add_label(l, "remote_port", std::to_string(fp.remote_port));
      ExpositionWriter::add_label(l, "remote_tier", tier_of(r));
      ExpositionWriter::add_label(l, "remote_rail", rail_of(r));
    } else {
      ExpositionWriter::add_label(l, "remote_node_guid", "");
      ExpositionWriter::add_label(l, "remote_node_name", "");
      ExpositionWriter::add_label(l, "remote_node_type", "");
      ExpositionWriter::add_label(l, "remote_port", "");
      ExpositionWriter::add_label(l, "remote_tier", "");
      ExpositionWriter::add_label(l, "remote_rail", "");
    }
    w.sample("infiniband_port_info", l, std::uint64_t{1});
  }

  w.family("infiniband_port_rate_bytes_per_second",
           "IBTA data rate of the active link in bytes/s (4x HDR: 25e9; 0 when down).", "gauge");
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const FabricPort& fp = fabric.nodes[s.ports[i].node].ports[s.ports[i].port_index];
    w.sample("infiniband_port_rate_bytes_per_second", port_labels[i],
             fp.up() ? link_data_rate_bytes(fp) : 0.0);
  }

  // Cardinality controls (config `export:`): which per-port counters render.
  const ExportConfig& ex = s.exporting;
  auto port_exported = [&](const PortView& p) {
    return ex.port_counters &&
           (ex.hca_port_counters || fabric.nodes[p.node].type != NodeType::kHca);
  };
  for (std::size_t c = 0; c < kCounterCount; ++c) {
    const CounterInfo& info = counter_info(c);
    const bool error = c >= static_cast<std::size_t>(Counter::kSymbolErrors);
    const bool traffic = !error && c != static_cast<std::size_t>(Counter::kTransmitWait);
    if ((error && !ex.error_counters) || (traffic && !ex.traffic_counters)) continue;
    bool any = false;
    for (const PortView& p : s.ports) any = any || (p.present[c] != 0 && port_exported(p));
    if (!any) continue;
    w.family(info.metric, info.help, "counter");
    for (std::size_t i = 0; i < s.ports.size(); ++i) {
      const PortView& p = s.ports[i];
      if (p.present[c] == 0 || !port_exported(p)) continue;
      w.sample(info.metric, port_labels[i], p.totals[c] * info.scale);
    }
  }
  render_analysis(s, port_labels, node_labels, tier_of, rail_of, port_exported, w);
  render_lane_counters(s, port_labels, w);
}

}  // namespace

void Snapshot::render(const ExpositionWriter::Sink& sink, std::size_t chunk_bytes) const {
  std::string buffer;
  buffer.reserve(chunk_bytes + 4096);
  ExpositionWriter w(buffer, sink, chunk_bytes);
  render_fabric(*this, w);
  w.flush();
  if (!exporter_metrics_text.empty()) sink(exporter_metrics_text);
}

std::string Snapshot::text() const {
  std::string out;
  render([&out](std::string_view piece) { out += piece; });
  return out;
}

const std::string& Snapshot::gzip() const {
  std::call_once(gzip_once_, [this] {
    // One compression per core next to this thread, which keeps rendering.
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    ParallelGzipWriter gz(gzip_level, threads);
    render([&gz](std::string_view piece) { gz.write(piece); });
    text_size_ = gz.bytes_in();
    gzip_ = gz.finish();
  });
  return gzip_;
}

std::size_t Snapshot::text_size() const {
  gzip();
  return text_size_;
}

std::shared_ptr<Snapshot> build_snapshot(std::shared_ptr<const Fabric> fabric,
                                         const SweepResult& sweep,
                                         const CounterAccumulator& accumulator,
                                         const NodeNameMap& names, const ExporterTotals& totals) {
  auto s = std::make_shared<Snapshot>();
  s->totals = totals;
  if (fabric) {
    const Fabric& f = *fabric;
    s->node_names.reserve(f.nodes.size());
    s->ports.reserve(f.port_count());
    for (std::uint32_t n = 0; n < f.nodes.size(); ++n) {
      const FabricNode& node = f.nodes[n];
      auto it = names.find(node.guid);
      s->node_names.push_back(it != names.end() ? it->second : node.description);
      for (std::uint32_t i = 0; i < node.ports.size(); ++i) {
        PortView v;
        v.node = n;
        v.port_index = i;
        if (const auto* st = accumulator.find(PortKey{node.guid, node.ports[i].number})) {
          v.has_counters = true;
          v.totals = st->total;
          v.present = st->bits;
        }
        s->ports.push_back(v);
      }
    }
    s->node_status = sweep.nodes;
    s->node_status.resize(f.nodes.size());
    s->discovery_timestamp_seconds =
        std::chrono::duration<double>(f.discovered_at.time_since_epoch()).count();
  }
  s->sweep = sweep;
  s->sweep.nodes.clear();
  s->sweep.port_read.clear();
  s->sweep_timestamp_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  s->fabric = std::move(fabric);
  return s;
}

}  // namespace ibfx
