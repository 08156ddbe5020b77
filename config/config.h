// Configuration of the daemon: the YAML file, the command line, and the
// node-name-map. Everything here is parsed once at start-up (or on reload);
// every error names the file, line, key and what is wrong.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config_error.h"

// yaml-cpp's own spelling of its namespace.
namespace YAML {  // NOLINT(readability-identifier-naming)
class Node;
}

namespace ibfx {

using Duration = std::chrono::milliseconds;
// A setting's duration in seconds, for arithmetic on Unix times.
inline double seconds_of(Duration d) { return std::chrono::duration<double>(d).count(); }

struct MadConfig {
  int global_inflight = 128;    // MADs outstanding on the whole fabric
  int per_node_inflight = 4;    // MADs outstanding to one node (switch CPU protection)
  Duration timeout{100};        // per MAD attempt
  int retries = 2;              // extra attempts after the first timeout
  int max_mads_per_second = 0;  // 0 = unlimited

  friend bool operator==(const MadConfig&, const MadConfig&) = default;
};

struct DiscoveryConfig {
  Duration interval{std::chrono::minutes(5)};  // background re-discovery period
  int max_smps = 16;                           // libibnetdisc in-flight SMPs
  Duration timeout{200};
  int retries = 2;
  // A node no discovery has found any more is forgotten (its series end)
  // only once it was missing from forget_after_discoveries consecutive
  // discoveries and for at least forget_after, and has not answered a PMA
  // query at its last LID meanwhile: a lost SMP must not cost its series.
  Duration forget_after{std::chrono::hours(1)};
  int forget_after_discoveries = 3;

  friend bool operator==(const DiscoveryConfig&, const DiscoveryConfig&) = default;
};

struct CountersConfig {
  // Writing to the fabric: off by default. When on, a counter narrower than
  // 64 bits that passes clear_threshold of its range is reset with a
  // PortCounters Set whose CounterSelect names only that counter group.
  bool clear_on_threshold = false;
  double clear_threshold = 0.75;  // fraction of the field's range, (0, 1]
  bool include_hcas = true;       // sweep HCA ports too, not only switches
  bool include_switch_port0 = false;
  // Send optional MADs (the PortSamplesControl probe, the counter groups'
  // probes, counter clears) to the SM's node and this management node's own
  // HCA too. Off: under the
  // simulator such a probe kills opensm (docs/safety.md).
  bool probe_sm_and_local_ports = false;
  // Opt-in counter groups (docs/counters.md), each off by default: each of
  // their attributes costs one probe per node and, where the PMA answers
  // it, one more Get per port and sweep.
  bool error_details = false;       // PortRcvErrorDetails, PortXmitDiscardDetails
  bool vl_transmit_wait = false;    // PortVLXmitWaitCounters, per VL
  bool congestion_control = false;  // PortRcvConCtrl, PortSLRcvFECN/BECN, PortXmitConCtrl,
                                    // PortVLXmitTimeCong

  friend bool operator==(const CountersConfig&, const CountersConfig&) = default;
};

// Several daemons can split one fabric: each sweeps the nodes whose GUID
// hashes to its index (like Prometheus' hashmod), discovery stays whole.
struct ShardingConfig {
  int count = 1;  // 1..1024
  int index = 0;  // 0..count-1
  bool operator==(const ShardingConfig&) const = default;
};

// Cardinality controls: which per-port series are exported. Aggregates,
// scores, port up/info and node series are always exported.
struct ExportConfig {
  bool port_counters = true;      // false: aggregates-only mode
  bool hca_port_counters = true;  // per-port counters of HCA ports
  bool error_counters = true;     // the error counter families
  bool traffic_counters = true;   // data, packets, uni/multicast families
  // Per-port series derivable in PromQL (W and U of the last interval, the
  // PortXmitWait unit): off by default, they cost ~20 % of the exposition.
  bool port_scores = false;
  // Error and detail counters that have never counted: off by default, a
  // port's error counter appears once it is non-zero (its totals only grow)
  // and infiniband_port_errors_total is always there (issue #15: 13 zero
  // series per healthy port were 40 % of the exposition).
  bool zero_error_counters = false;
  // PortXmitWait as raw counts beside transmit_wait_seconds_total: off by
  // default, the seconds carry the same counter in the unit of the hardware
  // in use. Ports whose unit is unknown always get the raw counts.
  bool raw_transmit_wait = false;
  bool operator==(const ExportConfig&) const = default;
};

// The HTTP server's connection limits and timeouts (YAML section "web"; not
// the exporter-toolkit web config file of http/web_config.h; the
// HttpServerLimits of http/http_server.h). Changing them needs a restart.
struct WebConnectionLimits {
  Duration header_timeout{std::chrono::seconds(10)};  // TLS handshake + request line + headers
  Duration idle_timeout{std::chrono::seconds(30)};    // keep-alive wait; stalled writes
  int max_connections = 0;                            // 0: from RLIMIT_NOFILE
  int max_connections_per_client = 0;                 // 0: no limit
  bool operator==(const WebConnectionLimits&) const = default;
};

// The host of an HCA is the first capture group of this over its node
// description: rdma-ndd's "<host> mlx5_<n>". The one default of both
// JobsConfig (what the operator configures) and JobJoinConfig (what the
// join uses).
inline constexpr std::string_view kDefaultHostRegex = "^([^ ]+) ";

// Slurm jobs joined to the fabric (YAML section "jobs", docs/jobs.md): off
// until `source` names where the running jobs come from.
struct JobsConfig {
  std::string source = "none";  // none | slurmrestd | squeue
  // slurmrestd: "unix:///run/slurmrestd.sock" (rest_auth/local) or
  // "http://host:port" / "https://host:port" (JWT: token_file + user_name).
  std::string url;
  std::string api_version = "v0.0.38";             // the path's /slurm/<api_version>/jobs
  std::string token_file;                          // X-SLURM-USER-TOKEN, read at start and reload
  std::string user_name;                           // X-SLURM-USER-NAME
  std::string squeue_command = "/usr/bin/squeue";  // source squeue: run with --json
  Duration poll_interval{std::chrono::seconds(10)};
  Duration timeout{std::chrono::seconds(5)};       // one poll, connect to last byte
  Duration grace_period{std::chrono::minutes(1)};  // last good list kept while polls fail
  int max_jobs = 2000;                             // running jobs; more fails the poll
  // Host of an HCA: the first capture group of host_regex over its node
  // description (rdma-ndd's "<host> mlx5_<n>"), unless host_map names it.
  std::string host_regex{kDefaultHostRegex};
  std::string host_map;  // file of "<slurm node name> <node description host>" lines

  bool enabled() const { return source != "none"; }
  friend bool operator==(const JobsConfig&, const JobsConfig&) = default;
};

// A node's fabric health for Slurm's health check (YAML section "nodes",
// docs/nodes.md, issue #43). Hosts are found as jobs: finds them
// (jobs.host_regex, jobs.host_map).
struct NodesConfig {
  // A host stays unhealthy this long after its last fault cleared, so that
  // a flapping cable does not bounce its node in and out of service.
  Duration recover_after{std::chrono::minutes(10)};
  // Blast-radius guard: when more than incident_share of the hosts (and at
  // least incident_min_hosts) turn unhealthy within incident_window, it is
  // the fabric, not those hosts: they say "fabric incident", not unhealthy.
  double incident_share = 0.05;
  int incident_min_hosts = 3;
  Duration incident_window{std::chrono::minutes(5)};
  // A published sweep older than this makes every verdict unknown.
  Duration stale_after{std::chrono::minutes(2)};
  friend bool operator==(const NodesConfig&, const NodesConfig&) = default;
};

// The status page's history (YAML section "history", docs/status-page.md
// "History"): every sweep for `recent_window`, the worst of each
// `coarse_step` beyond it up to `coarse_window`, never more than
// `max_memory_mb`; saved to the state directory at most every
// `save_interval`.
struct HistoryConfig {
  Duration recent_window{std::chrono::hours(1)};
  Duration coarse_window{std::chrono::hours(24)};
  Duration coarse_step{std::chrono::minutes(1)};
  int max_memory_mb = 64;
  Duration save_interval{std::chrono::minutes(5)};
  friend bool operator==(const HistoryConfig&, const HistoryConfig&) = default;
};

// The switches' unicast forwarding tables (YAML section "routes",
// docs/configuration.md, docs/route-reader.md): read with LID-routed SMP Gets
// (SwitchInfo, LinearForwardingTable) alongside the sweeps, at most
// smps_per_second of them.
struct RoutesConfig {
  bool enabled = true;
  // 10,000/s reads a 98k-port fabric's 355,840 SMPs (1,280 switches x 278:
  // SwitchInfo and blocks of 64 LIDs) in 30-39 s with 10 s sweeps (measured,
  // bench/route_read; docs/benchmarks.md).
  int smps_per_second = 10000;
  // Between full reads, every table is re-read once per reread_interval
  // (within smps_per_second): how soon a re-route the subnet manager makes
  // on its own is seen. After a link goes down or up the tables are
  // re-read at smps_per_second for a minute, while the SM re-routes.
  Duration reread_interval{std::chrono::minutes(1)};
  friend bool operator==(const RoutesConfig&, const RoutesConfig&) = default;
};

// Each Slurm job's fabric receipt (YAML section "receipts",
// docs/receipts.md, issue #44): built while the job runs (jobs.source must
// not be none), finished when it ends, kept keep_count / keep_age in the
// state directory.
struct ReceiptsConfig {
  bool enabled = true;
  int keep_count = 100000;
  Duration keep_age{std::chrono::hours(24 * 30)};
  // A job whose HCA ports stalled less than this share of their port-time,
  // with no link condition on them, is "network: clean".
  double clean_stall_ratio = 0.01;
  // With the job source gone this long, the jobs it last listed get their
  // receipts, end_known false: a receipt is never invented, nor lost.
  Duration unknown_end_after{std::chrono::hours(1)};
  friend bool operator==(const ReceiptsConfig&, const ReceiptsConfig&) = default;
};

struct Config {
  std::string listen_address = ":9690";
  std::string telemetry_path = "/metrics";  // where the exposition is served
  Duration sweep_interval{std::chrono::seconds(10)};
  std::string ca;   // local HCA name (empty: first with an active port)
  int ca_port = 0;  // 0: first active port
  std::string node_name_map_file;
  // Where the congestion events are kept across restarts (events.json;
  // docs/operations.md, "State directory"). Empty: not kept.
  std::string state_directory = "/var/lib/ibfabric_exporter";
  std::string log_level = "info";     // debug|info|warn|error
  std::string log_format = "logfmt";  // logfmt|json
  MadConfig mad;
  DiscoveryConfig discovery;
  CountersConfig counters;
  ShardingConfig sharding;
  ExportConfig exporting;  // YAML section "export"
  WebConnectionLimits web;
  JobsConfig jobs;
  HistoryConfig history;
  RoutesConfig routes;
  NodesConfig nodes;
  ReceiptsConfig receipts;

  // Lets a reload tell whether anything changed.
  friend bool operator==(const Config&, const Config&) = default;
};

// Prometheus-style durations: "1h30m", "10s", "250ms", "2m". Zero-length,
// negative or unit-less values are rejected with ConfigError.
Duration parse_duration(std::string_view text);
// The inverse, largest units first ("1m30s"); parse_duration(format_duration(d)) == d.
std::string format_duration(Duration duration);

// Loads a YAML config file over the defaults. Unknown keys, wrong types and
// out-of-range values are errors (file:line: key: what).
Config load_config_file(const std::string& path);
Config parse_config_yaml(std::string_view yaml_text, const std::string& source_name);
// The same over a document already parsed (config/yaml_reader.h); the
// `topology:` and `scores:` sections are left to analysis/analysis_config.h.
Config parse_config_document(const YAML::Node& document, const std::string& source_name);

// A reload (SIGHUP) applies every setting but these, which the daemon takes
// once at start-up: the listener and its connection limits, the exposition's
// path, the HCA, the state directory and the history ring's sizes (dotted
// keys; "web" and "history" stand for their sections). keep_restart_only()
// keeps `next`'s at `running`'s values and names those that differed, so
// that the reload applies the rest and says what needs a restart.
std::vector<std::string_view> restart_only_settings();
std::vector<std::string> keep_restart_only(const Config& running, Config& next);
// The entry of restart_only_settings() a dotted key is or falls under
// ("history.coarse_step": "history"); "" when a reload applies it.
std::string_view restart_only_setting_of(std::string_view dotted_key);

// Generic access by dotted key ("mad.timeout"), with the same validation as
// the file. The command line applies its flags through this; errors carry
// only the "<what is wrong>" part so each caller can say where it came from.
std::vector<std::string_view> config_keys();
void set_config_value(Config& config, std::string_view dotted_key, std::string_view text);
std::string config_value_text(const Config& config, std::string_view dotted_key);

}  // namespace ibfx
