// Every fabric metric family the daemon renders by hand, defined once.
// Per-port series carry only node_guid and port (the lean exposition, issue
// #15); names, tier, rail and the far end of the cable are joined from
// infiniband_port_info / infiniband_node_info. Values that change (port
// state, LIDs) are gauges, not labels, so they never start new series.
#pragma once

#include "exposition/metric_family.h"

namespace ibfx::families {

// --- nodes group (render_topology) ---
inline constexpr MetricFamily kNodeInfo{
    "infiniband_node_info", "gauge",
    "Discovered InfiniBand nodes and their names, tier and rail (join per-port series on "
    "node_guid); value is always 1.",
    "node_guid,node_name,node_type,node_description,vendor_id,device_id,num_ports,tier,rail"};
inline constexpr MetricFamily kNodeLid{"infiniband_node_lid", "gauge",
                                       "LID of the node (a switch's port 0, an HCA's first port).",
                                       "node_guid"};
inline constexpr MetricFamily kNodeUp{
    "infiniband_exporter_node_up", "gauge",
    "Whether the node answered PMA queries when last asked (1) or was asked and answered none "
    "(0).",
    "node_guid"};
inline constexpr MetricFamily kMiscabledPorts{
    "infiniband_rail_miscabled_ports", "gauge",
    "HCA ports cabled to a leaf of another rail, by the leaf's rail.", "rail"};
inline constexpr MetricFamily kMiscabledPortInfo{
    "infiniband_rail_miscabled_port_info", "gauge",
    "A miscabled HCA port: its rail, the rail of the leaf it is plugged into; value 1.",
    "node_guid,node_name,node_type,port,switch_guid,switch_name,switch_port,expected_rail,"
    "actual_rail"};
inline constexpr MetricFamily kSingleRail{
    "infiniband_switch_single_rail", "gauge",
    "Spines and cores whose leaves all serve one rail; value is that rail.",
    "node_guid,node_name,node_type"};

// --- ports group (render_port_info, render_port_counters) ---
inline constexpr MetricFamily kPortInfo{
    "infiniband_port_info", "gauge",
    "A port: its active link width and speed and the far end of its cable (remote_* empty when "
    "unlinked); the node's name, type, tier and rail are on infiniband_node_info (join on "
    "node_guid); value is always 1.",
    "node_guid,port,link_width,link_speed,remote_node_guid,remote_node_name,remote_port,"
    "remote_node_type,remote_tier"};
inline constexpr MetricFamily kPortState{
    "infiniband_port_state", "gauge",
    "PortInfo:PortState: 1 down, 2 init, 3 armed, 4 active (0: unknown). The link is up when "
    "PortState >= 2 and infiniband_port_physical_state is 5.",
    "node_guid,port"};
inline constexpr MetricFamily kPortPhysicalState{
    "infiniband_port_physical_state", "gauge",
    "PortInfo:PortPhysicalState: 1 sleep, 2 polling, 3 disabled, 4 port configuration "
    "training, 5 link up, 6 link error recovery, 7 phy test (0: unknown).",
    "node_guid,port"};
inline constexpr MetricFamily kPortLid{
    "infiniband_port_lid", "gauge",
    "LID of an HCA or router port (switch ports share their switch's infiniband_node_lid).",
    "node_guid,port"};
inline constexpr MetricFamily kPortRate{
    "infiniband_port_rate_bytes_per_second", "gauge",
    "IBTA data rate of the active link in bytes/s (4x HDR: 25e9; 0 when down).", "node_guid,port"};
inline constexpr MetricFamily kPortErrors{
    "infiniband_port_errors_total", "counter",
    "Sum of the port's PortCounters error counters (symbol_errors ... qp1_dropped), on every "
    "port that has them: each error counter appears only once it is non-zero "
    "(export.zero_error_counters), this sum is always there.",
    "node_guid,port"};
inline constexpr MetricFamily kWaitSeconds{
    "infiniband_port_transmit_wait_seconds_total", "counter",
    "PortXmitWait converted to seconds of stall (counts x the seconds one count stands for on "
    "the port, docs/scores.md); rate() of it is the stall ratio W.",
    "node_guid,port"};
inline constexpr MetricFamily kWaitUnit{
    "infiniband_port_transmit_wait_unit_seconds", "gauge",
    "Seconds of stall one PortXmitWait count stands for on this port (bytes lost per count / "
    "the link's data rate); model: quantum (8 B per port), switch-ib (32 B per lane), iba "
    "(Tick+1 B per lane), seconds (configured); source: where the assumption came from "
    "(export.port_scores).",
    "node_guid,port,model,source"};
inline constexpr MetricFamily kStallLast{
    "infiniband_port_stall_ratio_last", "gauge",
    "Stall ratio W of the port over the last sweep interval (export.port_scores).",
    "node_guid,port"};
inline constexpr MetricFamily kUtilizationLast{
    "infiniband_port_utilization_last", "gauge",
    "Utilisation U of the port over the last sweep interval: transmitted bytes per second / the "
    "link's data rate (export.port_scores).",
    "node_guid,port"};

// --- aggregates group (render_scores) ---
inline constexpr MetricFamily kStallHistogram{
    "infiniband_port_stall_ratio", "histogram",
    "Per-port stall ratio W (stall seconds per second) per sweep interval; one observation per "
    "port per sweep.",
    "tier,rail,le"};
inline constexpr MetricFamily kUtilizationHistogram{
    "infiniband_port_utilization", "histogram",
    "Per-port utilisation U (transmitted bytes per second / the link's data rate) per sweep "
    "interval; one observation per port per sweep.",
    "tier,rail,le"};
inline constexpr MetricFamily kRootScore{
    "infiniband_congestion_root_score", "gauge",
    "Top-K roots of congestion: max(W, U) of the root port plus the stall ratio W of every "
    "stalled port whose wait chains back to it (docs/scores.md, \"Root or victim\").",
    "node_guid,node_name,node_type,port,tier,rail,cause,remote_node_guid,remote_node_name,"
    "remote_port"};
inline constexpr MetricFamily kRootVictims{
    "infiniband_congestion_victim_ports", "gauge",
    "Stalled ports whose wait is attributed to this root of congestion.",
    "node_guid,node_name,node_type,port,tier,rail,cause,remote_node_guid,remote_node_name,"
    "remote_port"};
inline constexpr MetricFamily kUplinkImbalance{
    "infiniband_switch_uplink_imbalance", "gauge",
    "Per switch with two or more up ports: max over mean of their transmitted bytes in the last "
    "interval (1: evenly spread).",
    "node_guid"};
inline constexpr MetricFamily kRouteImbalance{
    "infiniband_switch_route_imbalance", "gauge",
    "Per switch with a forwarding table read and two or more active up ports: max over mean of "
    "the destination LIDs its table routes out of each up port (1: evenly spread; "
    "docs/routes.md).",
    "node_guid"};
inline constexpr MetricFamily kRouteChanges{
    "infiniband_route_changes_total", "counter",
    "Re-routes seen since the daemon started: the switches' forwarding tables changed after "
    "they had been read whole (each is an /events entry of kind \"route\").",
    ""};
inline constexpr MetricFamily kRouteBrokenEntries{
    "infiniband_route_broken_entries", "gauge",
    "(switch, destination LID) pairs whose path through the forwarding tables loops or ends "
    "before the destination (a hole or a link down), over the tables read.",
    ""};
inline constexpr MetricFamily kHotspot{
    "infiniband_hotspot_score", "gauge",
    "How far a switch (port=\"\") or one of the top-K ports stands out from its peers (same "
    "tier, rail, direction): robust z-score of W (docs/scores.md).",
    "node_guid,node_name,node_type,port,tier,rail"};
inline constexpr MetricFamily kTail{
    "infiniband_tail_latency_score", "gauge",
    "Heaviness of the stall tail per tier and rail: p99(W) / max(p50(W), floor).", "tier,rail"};
// A "quantile" label is reserved for summaries, hence "percentile".
inline constexpr MetricFamily kPercentile{
    "infiniband_stall_ratio_percentile", "gauge",
    "p50 and p99 of the per-port stall ratio per tier and rail, last interval.",
    "tier,rail,percentile"};
inline constexpr MetricFamily kWorstPath{
    "infiniband_worst_path_stalled_seconds", "gauge",
    "Upper bound of the stall added on the worst path (sum of W x interval over its egress "
    "ports), fabric-wide (rail=\"\") and per rail.",
    "rail"};

// --- aggregates group (render_events) ---
inline constexpr MetricFamily kEventsTotal{
    "infiniband_congestion_events_total", "counter",
    "Congestion events (trees followed over sweeps, /events) started, by the cause of their "
    "peak; kept across restarts in the state directory.",
    "cause"};
inline constexpr MetricFamily kEventSecondsTotal{
    "infiniband_congestion_event_seconds_total", "counter",
    "Seconds of congestion of the events (the intervals their root was seen in), by cause.",
    "cause"};
inline constexpr MetricFamily kEventsActive{
    "infiniband_congestion_events_active", "gauge",
    "Congestion events active now (their root seen within the grace period), by cause.", "cause"};

// --- ports group (render_link_ber) ---
inline constexpr MetricFamily kPortSymbolBer{
    "infiniband_port_symbol_ber", "gauge",
    "Symbol bit-error rate at this port's receiver (the direction into it): SymbolErrorCounter "
    "increments / (active lanes x lane rate x seconds) over the last minute, else over the long "
    "window (12 min); only ports with symbol errors in the window. A saturated 16-bit counter "
    "gives a lower bound.",
    "node_guid,port"};

// --- aggregates group (render_links) ---
inline constexpr MetricFamily kLinkUnhealthy{
    "infiniband_link_unhealthy", "gauge",
    "1 for each unhealthy cable, with its worst condition (ber_error, ber_warning, link_errors, "
    "flapping, down, degraded); node_* is the end whose receiver sees a one-direction "
    "condition. Healthy links have no series (docs/links.md).",
    "node_guid,port,remote_node_guid,remote_port,condition"};
inline constexpr MetricFamily kLinkLengthOutlier{
    "infiniband_link_length_outlier", "gauge",
    "PortInfo LinkRoundTripLatency in ns of each cable whose round trip is an outlier among its "
    "peers' (a longer cable: informational, never unhealthy); node_* is the end with the smaller "
    "GUID. Other links have no series (docs/links.md).",
    "node_guid,port,remote_node_guid,remote_port"};
inline constexpr MetricFamily kLinkEventsTotal{
    "infiniband_link_events_total", "counter",
    "Link conditions that started on a cable since the daemon started, by condition (one per "
    "link and condition, not per sweep).",
    "condition"};

// --- aggregates group (render_health) ---
inline constexpr MetricFamily kLocalPortState{
    "infiniband_exporter_local_port_state", "gauge",
    "PortInfo:PortState of the daemon's own HCA port at the last discovery: 1 Down, 2 "
    "Initialize, 3 Armed, 4 Active, 0 unknown. Below 4 no PMA MAD passes, so no node answers.",
    ""};
inline constexpr MetricFamily kClamped{
    "infiniband_exporter_stall_ratio_clamped_total", "counter",
    "Stall ratios outside [0, 1] (impossible: wrong tick length or counter glitch), clamped.", ""};

// --- aggregates group (render_jobs): Slurm jobs joined to the fabric (issue #28) ---
inline constexpr MetricFamily kJobInfo{
    "infiniband_job_info", "gauge",
    "A running Slurm job (jobs.source): its name, user and partition; value is always 1.",
    "job_id,job_name,user,partition"};
inline constexpr MetricFamily kJobHcaPorts{
    "infiniband_job_hca_ports", "gauge",
    "HCA ports of the job's hosts found in the fabric (host part of the node description, "
    "jobs.host_regex / jobs.host_map).",
    "job_id"};
inline constexpr MetricFamily kJobWaitSeconds{
    "infiniband_job_transmit_wait_seconds_total", "counter",
    "Stall seconds (W x interval) of the job's HCA ports and of the leaf ports into them, summed "
    "since the exporter first saw the job running.",
    "job_id"};
inline constexpr MetricFamily kJobStallMax{
    "infiniband_job_stall_ratio_max", "gauge",
    "Worst stall ratio W over the job's HCA ports and the leaf ports into them, last interval.",
    "job_id"};
inline constexpr MetricFamily kJobReceiptsTotal{
    "infiniband_job_receipts_total", "counter",
    "Slurm jobs' fabric receipts finished since the daemon started (issue #44, /jobs), by "
    "verdict; every verdict always, no per-job series.",
    "verdict"};
inline constexpr MetricFamily kRootJobs{
    "infiniband_congestion_root_jobs", "gauge",
    "Per exported root of congestion, the running jobs with ports in its tree (the root facing "
    "one of the job's HCAs, or a victim port of the job): how many of the job's ports are in it.",
    "node_guid,port,job_id"};
// --- aggregates group (render_nodes): each host's fabric health (issue #43) ---
inline constexpr MetricFamily kNodeRailsActive{
    "infiniband_node_rails_active", "gauge",
    "Active HCA ports of the host (Slurm node name: jobs.host_regex / jobs.host_map).", "host"};
inline constexpr MetricFamily kNodeRailsExpected{
    "infiniband_node_rails_expected", "gauge",
    "HCA ports the host should have: the most common count among the hosts named like it "
    "(digits aside), at least its own.",
    "host"};
inline constexpr MetricFamily kNodeUnhealthy{
    "infiniband_node_unhealthy", "gauge",
    "1 for a host whose fabric health drains it (docs/nodes.md), with the drain reason; "
    "unhealthy hosts only.",
    "host,reason"};
inline constexpr MetricFamily kNodeFabricIncident{
    "infiniband_node_fabric_incident", "gauge",
    "1 for a host the blast-radius guard holds back from draining (verdict fabric incident), "
    "with its reason; those hosts only.",
    "host,reason"};
inline constexpr MetricFamily kJobSourceUp{
    "infiniband_exporter_job_source_up", "gauge",
    "Whether the last poll of the Slurm job source (jobs.source) succeeded.", ""};
inline constexpr MetricFamily kJobHostsUnmatched{
    "infiniband_exporter_job_hosts_unmatched", "gauge",
    "Hosts of running Slurm jobs with no HCA in the fabric (jobs.host_regex or jobs.host_map do "
    "not map them): their jobs' ports are missing from the job series.",
    ""};
inline constexpr MetricFamily kJobSourceLastSuccess{
    "infiniband_exporter_job_source_last_success_timestamp_seconds", "gauge",
    "Unix time of the last successful poll of the Slurm job source (0: never).", ""};

}  // namespace ibfx::families
