#include "snapshot/snapshot.h"

#include <chrono>
#include <utility>

#include "base/utc_time.h"

namespace ibfx {

std::vector<std::string> node_display_names(const Fabric& fabric, const NodeNameMap& names) {
  std::vector<std::string> out;
  out.reserve(fabric.nodes.size());
  for (const FabricNode& node : fabric.nodes) {
    auto it = names.find(node.guid);
    out.push_back(it != names.end() ? it->second : node.description);
  }
  return out;
}

std::shared_ptr<const Snapshot> build_snapshot(SnapshotInputs in) {
  auto s = std::make_shared<Snapshot>();
  const SweepResult& sweep = *in.sweep;
  if (in.fabric) {
    const Fabric& f = *in.fabric;
    s->node_names = std::move(in.node_names);
    s->node_names.resize(f.nodes.size());
    s->ports.reserve(f.port_count());
    for (std::uint32_t n = 0; n < f.nodes.size(); ++n) {
      const FabricNode& node = f.nodes[n];
      const int tick = n < in.device_ticks.size() ? in.device_ticks[n] : -1;
      for (std::uint32_t i = 0; i < node.ports.size(); ++i) {
        PortView v;
        v.node = n;
        v.port_index = i;
        v.device_tick = tick;
        if (const auto* st = in.accumulator->find(PortKey{node.guid, node.ports[i].number})) {
          v.has_counters = true;
          v.totals = st->total;
          v.present = st->bits;
        }
        s->ports.push_back(v);
      }
    }
    s->node_status = sweep.nodes;
    s->node_status.resize(f.nodes.size());
    s->discovery_timestamp_seconds = unix_seconds(f.discovered_at);
  }
  s->sweep_totals = static_cast<const SweepTotals&>(sweep);  // per node: node_status
  s->sweep_timestamp_seconds =
      in.sweep_timestamp_seconds != 0 ? in.sweep_timestamp_seconds : unix_seconds_now();
  s->analysis = std::move(in.analysis);
  s->lanes = std::move(in.lanes);
  s->exporting = in.exporting;
  s->exporter_metrics_text = std::move(in.exporter_metrics_text);
  if (in.events) s->events = std::move(in.events);
  s->event_counters = in.event_counters;
  s->jobs = std::move(in.jobs);
  s->receipts = in.receipts;
  s->routes = std::move(in.routes);
  if (in.links) s->links = std::move(in.links);
  if (in.link_events) s->link_events = std::move(in.link_events);
  if (in.nodes) s->nodes = std::move(in.nodes);
  s->fabric = std::move(in.fabric);
  return s;
}

}  // namespace ibfx
