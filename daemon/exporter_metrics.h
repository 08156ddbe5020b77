// The daemon's own health metrics, on prometheus-cpp's metric model. Updated
// after each sweep/discovery on the sweep thread; serialized into the snapshot.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <memory>
#include <string>

#include "daemon/engine_totals.h"
#include "discovery/discovery_pacer.h"
#include "discovery/fabric_merger.h"
#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"
#include "mad/mad_engine.h"
#include "pipeline/receipts_stage.h"
#include "sweep/route_reader.h"
#include "sweep/sweeper.h"

namespace ibfx {

class ExporterMetrics {
 public:
  ExporterMetrics();

  void on_discovery(const Fabric* fabric, double seconds, bool ok);
  // A discovery starts, and why (schedule, partial retry, sweep request).
  void on_discovery_started(DiscoveryReason reason);
  // What merging a successful discovery into the known fabric did.
  void on_merge(const Fabric& found, const MergeOutcome& merged, bool partial);
  // Returns the Unix time it recorded as infiniband_exporter_last_sweep_timestamp_seconds,
  // which the sweep's snapshot (and so /status.json) carries too.
  double on_sweep(const SweepResult& sweep, std::size_t nodes_not_answering, bool overrun);
  // The engine's and the accumulator's cumulative totals, exported as they
  // are (daemon/engine_totals.h) at the next serialize().
  void update_totals(const MadEngineStats& mad, const AccumulatorStats& acc);

  // The route reader's own health after a sweep (sweep/route_reader.h):
  // its SMPs, the last full read, stale and incomplete tables, the oldest
  // table's age. Registered on first use, like the worker's.
  void on_routes(const RouteReaderStats& routes);

  // The MAD worker: up or not, and how often it was replaced. Registered on
  // first use, so that in-process transports (tests) export neither.
  void on_worker(bool up, std::uint64_t restarts);

  // The HTTP server's cumulative connection counts (evicted to make room,
  // refused with every slot busy); the difference since the last call is
  // added. Registered on first use, like the worker's.
  void on_http(std::uint64_t evicted, std::uint64_t refused);

  // The snapshot publisher's cumulative counts (pipeline/snapshot_publisher.h
  // PublisherStats) and its last render time (render + compress of the
  // last snapshot it published): the difference since the last call is
  // added to the counters. Read when a snapshot is built, so the render
  // time shown is that of the snapshot published before it; so is the
  // share of its text whose deflated blocks were reused from the snapshot
  // before it (`reused_bytes` of `reused_bytes + deflated_bytes`).
  void on_publisher(std::uint64_t published, std::uint64_t dropped, double last_render_seconds,
                    std::uint64_t reused_bytes = 0, std::uint64_t deflated_bytes = 0);

  // The receipts stage's own health (issue #44): running jobs tracked,
  // receipts stored, failed writes (cumulative; the difference is added).
  // Registered on first use: receipts off, none of them.
  void on_receipts(const ReceiptsStageStats& receipts);

  std::string serialize() const;

 private:
  // The constructor's steps: each registers one concern's families.
  void register_build_info(prometheus::Registry& r);
  void register_sweep_metrics(prometheus::Registry& r);
  void register_discovery_metrics(prometheus::Registry& r);
  void register_guard_metrics(prometheus::Registry& r);
  void register_publisher_metrics(prometheus::Registry& r);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* sweeps_ = nullptr;
  prometheus::Counter* sweeps_incomplete_ = nullptr;
  prometheus::Counter* sweep_overruns_ = nullptr;
  prometheus::Counter* lid_mismatches_ = nullptr;
  prometheus::Counter* discoveries_ = nullptr;
  prometheus::Counter* discovery_failures_ = nullptr;
  prometheus::Counter* clears_sent_ = nullptr;
  prometheus::Gauge* last_sweep_duration_ = nullptr;
  prometheus::Gauge* last_sweep_timestamp_ = nullptr;
  prometheus::Gauge* last_discovery_duration_ = nullptr;
  prometheus::Gauge* last_discovery_timestamp_ = nullptr;
  prometheus::Gauge* swept_ports_ = nullptr;
  prometheus::Gauge* nodes_not_answering_ = nullptr;
  prometheus::Gauge* discovered_ports_ = nullptr;
  prometheus::Family<prometheus::Gauge>* discovered_nodes_ = nullptr;
  std::array<prometheus::Counter*, kDiscoveryReasonCount> discovery_reasons_{};
  prometheus::Counter* discovery_smp_timeouts_ = nullptr;
  prometheus::Counter* discovery_smp_errors_ = nullptr;
  prometheus::Counter* nodes_forgotten_ = nullptr;
  prometheus::Gauge* last_discovery_partial_ = nullptr;
  prometheus::Gauge* discovery_missing_nodes_ = nullptr;
  prometheus::Gauge* known_nodes_ = nullptr;
  prometheus::Gauge* stale_nodes_ = nullptr;
  prometheus::Gauge* oldest_reading_age_ = nullptr;
  prometheus::Histogram* sweep_duration_ = nullptr;
  struct RouteMetrics {
    prometheus::Counter* answered = nullptr;
    prometheus::Counter* failed = nullptr;
    prometheus::Counter* cancelled = nullptr;
    prometheus::Counter* full_reads = nullptr;
    prometheus::Counter* reroutes = nullptr;
    prometheus::Gauge* full_read_seconds = nullptr;
    prometheus::Gauge* tables = nullptr;
    prometheus::Gauge* stale = nullptr;
    prometheus::Gauge* incomplete = nullptr;
    prometheus::Gauge* age = nullptr;
    RouteReaderStats last;  // the counts already added
  };
  std::unique_ptr<RouteMetrics> routes_;
  prometheus::Gauge* worker_up_ = nullptr;
  prometheus::Counter* worker_restarts_ = nullptr;
  std::uint64_t last_worker_restarts_ = 0;
  prometheus::Counter* probes_withheld_ = nullptr;
  prometheus::Counter* clears_withheld_ = nullptr;
  prometheus::Counter* http_evicted_ = nullptr;
  prometheus::Counter* http_refused_ = nullptr;
  std::uint64_t last_http_evicted_ = 0, last_http_refused_ = 0;
  // The engine's and accumulator's own totals, collected at serialize().
  std::shared_ptr<EngineTotals> totals_;
  prometheus::Counter* snapshots_published_ = nullptr;
  prometheus::Counter* snapshots_dropped_ = nullptr;
  prometheus::Gauge* last_render_duration_ = nullptr;
  prometheus::Gauge* last_render_reused_ratio_ = nullptr;
  std::uint64_t last_published_ = 0, last_dropped_ = 0;
  prometheus::Gauge* receipts_running_ = nullptr;
  prometheus::Gauge* receipts_stored_ = nullptr;
  prometheus::Counter* receipt_write_failures_ = nullptr;
  std::uint64_t last_receipt_write_failures_ = 0;
};

}  // namespace ibfx
