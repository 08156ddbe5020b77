// The immutable result of one sweep: what /metrics shows until the next one.
// Plain data, built complete on the sweep thread by build_snapshot() from
// everything the sweep and its analysis produced, then never changed: the
// publisher renders it (exposition/rendered_exposition.h) and the HTTP side
// only reads what was published. A scrape never touches the fabric and
// never renders.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/congestion_events.h"
#include "analysis/sweep_analyzer.h"
#include "analysis/topology.h"
#include "config/config.h"
#include "config/node_name_map.h"
#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"
#include "fabric/lane_accumulator.h"
#include "fabric/sweep_result.h"
#include "jobs/job_join.h"
#include "links/link_events.h"
#include "links/link_report.h"
#include "nodes/node_health.h"
#include "receipts/job_receipt.h"
#include "routing/route_tracker.h"

namespace ibfx {

struct PortView {
  std::uint32_t node = 0;        // index into Fabric::nodes
  std::uint32_t port_index = 0;  // index into FabricNode::ports
  bool has_counters = false;     // read at least once since start-up
  int device_tick = -1;          // the node's PortSamplesControl.Tick; -1: unknown
  std::array<std::uint64_t, kCounterCount> totals{};
  std::array<std::uint8_t, kCounterCount> present{};  // counter ever read
};

// The Slurm jobs of one sweep (issue #28): the job source's state when the
// sweep's analysis ran and the join of its job list to the sweep's scores;
// rendered by exposition/render_jobs. Disabled (jobs.source: none): nothing.
struct JobsView {
  bool enabled = false;
  bool source_up = false;           // the job source's last poll succeeded
  double last_success_seconds = 0;  // Unix time of its last good poll; 0: never
  JobJoinResult join;
  // The list `join` was made of (JobSourceState::jobs): the receipts
  // (issue #44) read each job's name, user and start from it. Null: none.
  std::shared_ptr<const std::vector<SlurmJob>> list;
  std::shared_ptr<const std::vector<SlurmJobEnd>> ended;  // JobSourceState::ended
};

// The job receipts of one sweep (issue #44, receipts/): how many finished
// since the daemon started, by verdict (infiniband_job_receipts_total,
// every verdict always). The receipts themselves are served from the
// ReceiptStore (/jobs), not from the snapshot. Off: nothing rendered.
struct ReceiptsView {
  bool enabled = false;
  std::array<std::uint64_t, kReceiptVerdictCount> finished{};
};

struct Snapshot {
  std::shared_ptr<const Fabric> fabric;  // null before the first discovery
  SweepAnalysis analysis;  // empty until two sweeps; its topology (tier/rail labels) may be null
  std::vector<std::string> node_names;  // node-name-map, else NodeDescription
  std::vector<PortView> ports;          // every discovered port, node order
  std::vector<NodeSweep> node_status;   // parallel to fabric->nodes
  SweepTotals sweep_totals;             // the sweep's own totals (node_status: per node)
  double sweep_timestamp_seconds = 0;   // Unix time the sweep finished
  double discovery_timestamp_seconds = 0;
  ExportConfig exporting;  // which per-port series to render
  // Per-VL / per-SL totals of the opt-in counter groups (empty when off);
  // rendered by exposition/render_vl_counters.
  std::vector<PortLaneTotals> lanes;
  // The daemon's own metrics (prometheus-cpp registry), serialized when the
  // snapshot was built so that it and the fabric series are one instant.
  std::string exporter_metrics_text;
  // The congestion events as this sweep left them (analysis/
  // congestion_events.h), newest start first, and their counters by cause.
  std::shared_ptr<const EventList> events = std::make_shared<const EventList>();
  EventCounters event_counters;
  JobsView jobs;  // Slurm jobs joined to this sweep (issue #28)
  // Link health after this sweep (issue #34, analysis/link_health_tracker.h).
  std::shared_ptr<const LinkHealthReport> links = std::make_shared<const LinkHealthReport>();
  std::shared_ptr<const LinkEventList> link_events = std::make_shared<const LinkEventList>();
  // The routes (issue #41): the route model this sweep's analysis used,
  // the switches' routing balance, the senders behind its roots and the
  // re-routes seen so far. Empty model: no tables read (or routes off).
  RouteSweep routes;
  // Each host's fabric health after this sweep (issue #43, nodes/node_health.h).
  std::shared_ptr<const NodeHealthReport> nodes = std::make_shared<const NodeHealthReport>();
  ReceiptsView receipts;  // issue #44
};

// The names every series and view shows for the nodes of `fabric`: the
// node-name-map's entry, else the NodeDescription (untrusted text).
std::vector<std::string> node_display_names(const Fabric& fabric, const NodeNameMap& names);

// What one snapshot is built from. The fabric is the one the sweep ran on:
// the sweep's per-node results are parallel to its node list.
struct SnapshotInputs {
  std::shared_ptr<const Fabric> fabric;
  const SweepResult* sweep = nullptr;               // required
  const CounterAccumulator* accumulator = nullptr;  // required
  std::vector<std::string> node_names;              // node_display_names(); parallel to nodes
  // Each node's PortSamplesControl.Tick (-1: unknown), parallel to nodes
  // (empty: every tick unknown).
  std::vector<int> device_ticks;
  SweepAnalysis analysis;
  std::vector<PortLaneTotals> lanes;
  ExportConfig exporting;
  std::string exporter_metrics_text;
  // Unix time the sweep finished; 0: now.
  double sweep_timestamp_seconds = 0;
  std::shared_ptr<const EventList> events;  // null: none
  EventCounters event_counters;
  JobsView jobs;
  std::shared_ptr<const LinkHealthReport> links;     // null: none
  std::shared_ptr<const LinkEventList> link_events;  // null: none
  RouteSweep routes;
  std::shared_ptr<const NodeHealthReport> nodes;  // null: none
  ReceiptsView receipts;
};

// Builds the snapshot of one sweep, complete: nothing is added to it later.
std::shared_ptr<const Snapshot> build_snapshot(SnapshotInputs inputs);

}  // namespace ibfx
