// What the status page (GET /) and /status.json show of one snapshot,
// aggregated to switches: the fabric page has one cell per switch, never
// one element per port (issue #27: at 98k ports the page stays small and
// renders in milliseconds). Built once per sweep by the publisher from the
// published snapshot, then rendered by render_status_html() and
// render_status_json(); plain data, names already valid UTF-8 (still
// untrusted: every renderer escapes them for its context).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/topology.h"
#include "history/history_frame.h"
#include "history/page_rows.h"
#include "snapshot/snapshot.h"
#include "views/status_links.h"
#include "views/status_nodes.h"

namespace ibfx {

// One switch of the heatmap: its worst port over the last interval.
struct StatusSwitch {
  std::size_t node = 0;  // index into Fabric::nodes
  std::uint64_t guid = 0;
  std::string name;
  Tier tier = Tier::kUnknown;
  int rail = kNoRail;  // leaves: the rail they serve; others: kNoRail
  // Leaves: the scalable unit, i.e. the leaf's place among the leaves of its
  // rail in name order (leaf-r0-01, leaf-r0-02...: in a rail-optimized
  // fabric the n-th leaf of every rail serves the same servers). -1: none.
  int unit = -1;
  bool valid = false;      // a W for at least one port
  double stall = 0;        // W of the worst port
  double utilization = 0;  // U of that port (0 when unknown)
  bool utilization_valid = false;
  int worst_port = 0;         // its port number (0: none)
  bool answering = true;      // answered the last sweep's PMA queries
  bool root = false;          // one of its ports is a root of congestion
  bool link_trouble = false;  // one of its cables is unhealthy (issue #34, links[])
};

// A row of the heatmap: the leaves of one rail (by unit), then the spine
// tier and the core tier.
struct StatusRow {
  std::string label;                  // "rail 0", "spine", "core", "other switches"
  std::vector<std::size_t> switches;  // indices into StatusModel::switches, in order
};

// An HCA port whose routes cross a root port (issue #41), ranked by what it
// sent over the interval.
struct StatusSender {
  std::uint64_t guid = 0;
  std::string name;
  int port = 0;
  double bytes_per_second = 0;
  // The Slurm jobs on its host: "<id> <name> (<user>)" (nullopt: not known).
  std::optional<std::vector<std::string>> jobs;
};

// A root as the live page shows it: what every page shows of it (the
// history keeps that part, history/page_rows.h), then the evidence only
// the live snapshot has.
struct StatusRoot : PageRoot {
  bool held = false;
  // The worst BER, link-error or flapping condition of its cable (issue
  // #34; "" none): it may be why the port is slow.
  std::string link_condition;
  // From the forwarding tables (issue #41); nullopt: the root's switch has
  // no table read. Destinations routed out of the root port, the mean of
  // its switch's other up ports' (an up port only; -1 otherwise), the HCA
  // ports whose routes cross it and the top of them by bytes sent (their
  // jobs are PageRoot::sending_jobs).
  std::optional<std::int64_t> routes;
  double peer_routes = -1;
  std::optional<std::size_t> sender_ports;
  std::vector<StatusSender> senders;
};

struct StatusPort {
  std::uint64_t guid = 0;
  std::string name;
  int port = 0;
  Tier tier = Tier::kUnknown;
  double stall = 0;
  bool utilization_valid = false;
  double utilization = 0;
  StatusFarEnd remote;
};

// A cabled link that is down, or up at a lower width or speed than both of
// its ends enable, or at a lower data rate than its peers: the ports of the
// same kind (node type, tier and rail at this end, node type and tier at
// the far end), as the "below_peers" recording rule of
// dashboards/rules/ibfabric_exporter.rules.yaml decides it. Listed once per
// cable.
struct StatusLink {
  std::uint64_t guid = 0;
  std::string name;
  int port = 0;
  StatusFarEnd remote;
  bool down = false;
  std::string width;  // "4x"
  std::string speed;  // "HDR"
  double rate_gbps = 0;
  double peers_rate_gbps = 0;  // the median of its peers (0 for a down link)
  std::string reason;          // why degraded: degraded_reason() ("" for a down link)
};

struct StatusNode {
  std::uint64_t guid = 0;
  std::string name;
  std::string type;     // node_type_name()
  bool present = true;  // found by the latest discovery
};

// A congestion event (active or recent, analysis/congestion_events.h), with
// the names and meanings /events gives the same fields, so that a row of
// the page or of status.json can be looked up there by its id.
struct StatusEvent {
  std::uint64_t id = 0;
  std::string state;  // "active", "ended"
  std::string name;   // the root's node
  int port = 0;
  std::string cause;
  double start = 0;           // Unix seconds
  std::optional<double> end;  // absent while active
  double duration_seconds = 0;
  double peak_score = 0;
  std::uint64_t peak_victims = 0;
  std::vector<std::string> jobs;  // Slurm job ids its tree hurt, ascending
  bool jobs_truncated = false;
};

// How the sweep went (the history keeps the PageSweep part), the daemon's
// own port and the forwarding tables.
struct StatusSweep : PageSweep {
  double timestamp_seconds = 0;  // Snapshot::sweep_timestamp_seconds, as /metrics has it
  std::size_t stale_nodes = 0;
  // The daemon's own HCA port (Fabric::local_node): empty when unknown.
  std::string local_name;
  std::string local_port_state;  // "Active 4x HDR"
  // The switches' forwarding tables (issue #41; routes_known false: none
  // read yet, or routes.enabled off): how many are kept, stale (the switch
  // stopped answering) or not yet read whole, the least recently confirmed
  // one's age, how long the last full read took (0: none finished yet).
  bool routes_known = false;
  std::size_t route_tables = 0;
  std::size_t route_tables_stale = 0;
  std::size_t route_tables_incomplete = 0;
  double route_oldest_age_seconds = 0;
  double route_full_read_seconds = 0;
  std::uint64_t route_changes = 0;
};

// A page "as it was" (/?at=, /status.json?at=): rebuilt from the history
// frame of that time (issue #35), not from a snapshot.
struct StatusAsOf {
  double requested = 0;  // the time asked for
  double time = 0;       // the frame's: its sweep, or its coarse step's start
  double span = 0;       // 0: one sweep; else the step the worst of `sweeps` sweeps is kept for
  std::uint32_t sweeps = 1;
  // The newest frame of the history: `requested` is at or after the last
  // sweep, and the page says so rather than "the sweep nearest before".
  bool newest = false;
};

struct StatusModel {
  StatusSweep sweep;
  std::vector<StatusSwitch> switches;  // every switch, in fabric order
  std::vector<StatusRow> rows;
  std::vector<StatusRoot> roots;           // by score, descending
  std::vector<StatusPort> hottest;         // by W, descending, at most kStatusMaxRows
  std::vector<StatusLink> degraded_links;  // at most kStatusMaxRows
  std::size_t degraded_total = 0;
  std::vector<StatusNode> not_answering;  // at most kStatusMaxRows
  std::size_t not_answering_total = 0;
  // Unhealthy links (issue #34), worst first, at most kStatusMaxRows.
  std::vector<StatusLinkHealth> links;
  std::size_t links_total = 0;
  // Hosts whose fabric health is not healthy (docs/nodes.md).
  StatusUnhealthyNodes unhealthy_nodes;
  // Active and recent congestion events, newest start first, at most
  // kStatusMaxRows; nullopt: the snapshot has none tracked (the page says
  // so).
  std::optional<std::vector<StatusEvent>> events;
  // Refresh period of the page, in seconds (about one sweep).
  int refresh_seconds = 30;
  // Where the page links to the metrics (--web.telemetry-path).
  std::string telemetry_path = "/metrics";
  // Set: the page as it was at a past sweep, from the history.
  std::optional<StatusAsOf> as_of;
  // The history the page draws over time (issue #35); null: none kept.
  std::shared_ptr<const HistoryFrames> history;
  double history_window_seconds = 3600;  // ?window=
};

// Rows per table on the page and in status.json; the counts say how many
// there were in all.
inline constexpr std::size_t kStatusMaxRows = 50;
inline constexpr std::size_t kStatusHottestRows = 20;

StatusModel build_status_model(const Snapshot& snapshot);

// One congestion event as the page and status.json show it.
StatusEvent status_event(const CongestionEvent& event);

// Fills m.rows from m.switches (leaves by rail and unit, then the spine,
// core and other tiers) and numbers each leaf's unit.
void lay_out_status_rows(StatusModel& m);

}  // namespace ibfx
