#include "daemon/snapshot.h"

#include <cstdio>

#include "daemon/exposition.h"
#include "daemon/http_server.h"

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

void render_fabric(const Snapshot& s, std::string& out) {
  if (!s.fabric) return;
  const Fabric& fabric = *s.fabric;
  ExpositionWriter w(out);

  // Labels shared by every series of a node, built once per render.
  std::vector<std::string> node_labels(fabric.nodes.size());
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    std::string& l = node_labels[n];
    ExpositionWriter::add_label(l, "node_guid", guid_hex(fabric.nodes[n].guid));
    ExpositionWriter::add_label(l, "node_name", s.node_names[n]);
    ExpositionWriter::add_label(l, "node_type", node_type_name(fabric.nodes[n].type));
  }
  std::vector<std::string> port_labels(s.ports.size());
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const PortView& p = s.ports[i];
    port_labels[i] = node_labels[p.node];
    ExpositionWriter::add_label(
        port_labels[i], "port",
        std::to_string(fabric.nodes[p.node].ports[p.port_index].number));
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
    w.sample("infiniband_node_info", l, std::uint64_t{1});
  }

  w.family("infiniband_exporter_node_up",
           "Whether the node answered every PMA query of the last sweep (1) or not (0).", "gauge");
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    // A node no longer discovered stays visible as not answering.
    const bool present = fabric.nodes[n].present;
    if (present && !s.node_status[n].swept) continue;
    w.sample("infiniband_exporter_node_up", node_labels[n],
             std::uint64_t{present && s.node_status[n].answered ? 1u : 0u});
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
    std::snprintf(rate, sizeof rate, "%g", link_lane_gbps(fp) * link_width_lanes(fp.width_active));
    ExpositionWriter::add_label(l, "rate_gbps", fp.width_active != 0 ? rate : "");
    ExpositionWriter::add_label(l, "lid", std::to_string(fp.lid));
    if (fp.linked()) {
      const auto r = static_cast<std::size_t>(fp.remote_node);
      ExpositionWriter::add_label(l, "remote_node_guid", guid_hex(fabric.nodes[r].guid));
      ExpositionWriter::add_label(l, "remote_node_name", s.node_names[r]);
      ExpositionWriter::add_label(l, "remote_node_type", node_type_name(fabric.nodes[r].type));
      ExpositionWriter::add_label(l, "remote_port", std::to_string(fp.remote_port));
    } else {
      ExpositionWriter::add_label(l, "remote_node_guid", "");
      ExpositionWriter::add_label(l, "remote_node_name", "");
      ExpositionWriter::add_label(l, "remote_node_type", "");
      ExpositionWriter::add_label(l, "remote_port", "");
    }
    w.sample("infiniband_port_info", l, std::uint64_t{1});
  }

  w.family("infiniband_port_rate_bytes_per_second",
           "Data rate of the active link after line encoding (0 when down).", "gauge");
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const FabricPort& fp = fabric.nodes[s.ports[i].node].ports[s.ports[i].port_index];
    w.sample("infiniband_port_rate_bytes_per_second", port_labels[i],
             fp.up() ? link_data_rate_bytes(fp) : 0.0);
  }

  for (std::size_t c = 0; c < kCounterCount; ++c) {
    const CounterInfo& info = counter_info(c);
    bool any = false;
    for (const PortView& p : s.ports) any = any || p.present[c] != 0;
    if (!any) continue;
    w.family(info.metric, info.help, "counter");
    for (std::size_t i = 0; i < s.ports.size(); ++i) {
      const PortView& p = s.ports[i];
      if (p.present[c] == 0) continue;
      w.sample(info.metric, port_labels[i], p.totals[c] * info.scale);
    }
  }
}

}  // namespace

const std::string& Snapshot::text() const {
  std::call_once(text_once_, [this] {
    std::string& out = rendered_.text;
    // ~120 bytes per series; reserve to avoid regrowth on big fabrics.
    out.reserve(ports.size() * (kCounterCount + 4) * 120 + exporter_metrics_text.size() + 4096);
    render_fabric(*this, out);
    out += exporter_metrics_text;
  });
  return rendered_.text;
}

const std::string& Snapshot::gzip() const {
  std::call_once(gzip_once_, [this] { rendered_.gzip = gzip_compress(text()); });
  return rendered_.gzip;
}

std::shared_ptr<Snapshot> build_snapshot(std::shared_ptr<const Fabric> fabric, SweepResult sweep,
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
    s->node_status = std::move(sweep.nodes);
    s->node_status.resize(f.nodes.size());
    s->discovery_timestamp_seconds =
        std::chrono::duration<double>(f.discovered_at.time_since_epoch()).count();
  }
  sweep.nodes.clear();
  sweep.port_read.clear();
  s->sweep = std::move(sweep);
  s->sweep_timestamp_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  s->fabric = std::move(fabric);
  return s;
}

}  // namespace ibfx
