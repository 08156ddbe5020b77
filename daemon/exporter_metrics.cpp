#include "daemon/exporter_metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <chrono>
#include <iterator>

#include "base/utc_time.h"

namespace ibfx {

namespace {
prometheus::Counter* counter(prometheus::Registry& r, const std::string& name,
                             const std::string& help, const prometheus::Labels& labels = {}) {
  return &prometheus::BuildCounter().Name(name).Help(help).Register(r).Add(labels);
}
prometheus::Gauge* gauge(prometheus::Registry& r, const std::string& name,
                         const std::string& help) {
  return &prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
}
// Adds what a cumulative count gained since `last` (and remembers it).
void add_since(prometheus::Counter* c, std::uint64_t now, std::uint64_t& last) {
  if (now > last) {
    c->Increment(static_cast<double>(now - last));
    last = now;
  }
}
}  // namespace

ExporterMetrics::ExporterMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      totals_(std::make_shared<EngineTotals>()) {
  auto& r = *registry_;
  register_build_info(r);
  register_sweep_metrics(r);
  register_discovery_metrics(r);
  register_guard_metrics(r);
  register_publisher_metrics(r);
}

// infiniband_exporter_build_info: the version, always 1.
void ExporterMetrics::register_build_info(prometheus::Registry& r) {
  prometheus::BuildGauge()
      .Name("infiniband_exporter_build_info")
      .Help("Build information of ibfabric_exporter; value is always 1.")
      .Register(r)
      .Add({{"version", IBFX_VERSION}})
      .Set(1);
}

// Each sweep: how many, how long, cut short or overrun, what it read.
void ExporterMetrics::register_sweep_metrics(prometheus::Registry& r) {
  sweeps_ = counter(r, "infiniband_exporter_sweeps_total", "PMA sweeps run.");
  sweeps_incomplete_ = counter(r, "infiniband_exporter_sweeps_incomplete_total",
                               "Sweeps cut short by their time budget.");
  // A LID that answered as another node or port (the SM moved it): the
  // readings taken there were dropped and discovery runs again.
  lid_mismatches_ = counter(r, "infiniband_exporter_lid_mismatches_total",
                            "LIDs found answering as another node or port; readings dropped.");
  sweep_overruns_ = counter(r, "infiniband_exporter_sweep_overruns_total",
                            "Sweeps that took longer than the sweep interval.");
  last_sweep_duration_ = gauge(r, "infiniband_exporter_last_sweep_duration_seconds",
                               "Duration of the last PMA sweep.");
  last_sweep_timestamp_ = gauge(r, "infiniband_exporter_last_sweep_timestamp_seconds",
                                "Unix time the last PMA sweep finished.");
  last_discovery_duration_ = gauge(r, "infiniband_exporter_last_discovery_duration_seconds",
                                   "Duration of the last successful fabric discovery.");
  last_discovery_timestamp_ = gauge(r, "infiniband_exporter_last_discovery_timestamp_seconds",
                                    "Unix time of the last successful fabric discovery.");
  swept_ports_ = gauge(r, "infiniband_exporter_swept_ports",
                       "Ports whose counters were read in the last sweep.");
  nodes_not_answering_ =
      gauge(r, "infiniband_exporter_nodes_not_answering",
            "Nodes asked in the last sweep that answered no PMA query (after the retries).");
  stale_nodes_ =
      gauge(r, "infiniband_exporter_stale_nodes",
            "Nodes the last sweep's budget did not let it finish: their series and node_up are "
            "from an earlier sweep; the next sweep starts with them.");
  oldest_reading_age_ =
      gauge(r, "infiniband_exporter_oldest_node_reading_age_seconds",
            "Age of the oldest reading among the nodes swept (a sweep cut short leaves some "
            "older than one interval).");
  sweep_duration_ = &prometheus::BuildHistogram()
                         .Name("infiniband_exporter_sweep_duration_seconds")
                         .Help("Distribution of PMA sweep durations.")
                         .Register(r)
                         .Add({}, prometheus::Histogram::BucketBoundaries{0.05, 0.1, 0.25, 0.5, 1,
                                                                          2.5, 5, 10, 30, 60});
}

// Each discovery: how many, why, how long, what it found, lost and kept.
void ExporterMetrics::register_discovery_metrics(prometheus::Registry& r) {
  discoveries_ = counter(r, "infiniband_exporter_discoveries_total", "Fabric discoveries run.");
  discovery_failures_ =
      counter(r, "infiniband_exporter_discovery_failures_total", "Fabric discoveries that failed.");
  discovered_ports_ = gauge(r, "infiniband_exporter_discovered_ports",
                            "Ports found by the last successful discovery.");
  discovered_nodes_ = &prometheus::BuildGauge()
                           .Name("infiniband_exporter_discovered_nodes")
                           .Help("Nodes found by the last successful discovery, by type.")
                           .Register(r);
  auto& reasons = prometheus::BuildCounter()
                      .Name("infiniband_exporter_discovery_runs_total")
                      .Help(
                          "Discoveries started, by reason: startup, scheduled "
                          "(discovery.interval), partial_retry (the last one lost SMPs or "
                          "missed known nodes), worker_restart, lid_mismatch, link_down, "
                          "node_silent.")
                      .Register(r);
  for (int i = 0; i < kDiscoveryReasonCount; ++i) {
    discovery_reasons_[static_cast<std::size_t>(i)] = &reasons.Add(
        {{"reason", std::string(discovery_reason_name(static_cast<DiscoveryReason>(i)))}});
  }
  discovery_smp_timeouts_ =
      counter(r, "infiniband_exporter_discovery_smp_timeouts_total",
              "Discovery SMPs that got no answer after their retries (what lies behind one is "
              "missing from that discovery).");
  discovery_smp_errors_ = counter(r, "infiniband_exporter_discovery_smp_errors_total",
                                  "Discovery SMPs answered with an error status.");
  nodes_forgotten_ =
      counter(r, "infiniband_exporter_nodes_forgotten_total",
              "Known nodes dropped (their series end) after missing from "
              "discovery.forget_after_discoveries discoveries and for discovery.forget_after.");
  last_discovery_partial_ =
      gauge(r, "infiniband_exporter_last_discovery_partial",
            "1 when the last successful discovery lost SMPs or missed known nodes (retried "
            "sooner, with back-off), else 0.");
  discovery_missing_nodes_ =
      gauge(r, "infiniband_exporter_discovery_missing_nodes",
            "Known nodes the last discovery did not find: kept as last seen, still swept.");
  known_nodes_ = gauge(r, "infiniband_exporter_known_nodes",
                       "Nodes in the known fabric (found by the last discovery or kept).");
}

// What the SM guard (docs/safety.md) withheld, and the clears sent.
void ExporterMetrics::register_guard_metrics(prometheus::Registry& r) {
  clears_sent_ = counter(r, "infiniband_exporter_clear_requests_total",
                         "PortCounters Set requests sent to clear counters near saturation.");
  // Nodes that may run a subnet manager get no optional MAD
  // (docs/safety.md): what that withheld, so a missing probe is explained.
  probes_withheld_ =
      counter(r, "infiniband_exporter_optional_probes_withheld_total",
              "Optional PMA probes not sent because the node may run a subnet manager "
              "(docs/safety.md).");
  clears_withheld_ =
      counter(r, "infiniband_exporter_clears_withheld_total",
              "Counter clears (PortCounters Set) not sent because the node may run a subnet "
              "manager (docs/safety.md).");
}

// The publisher: snapshots published and dropped, the render's time and
// reuse.
void ExporterMetrics::register_publisher_metrics(prometheus::Registry& r) {
  // The publisher (pipeline/snapshot_publisher.h): a snapshot it could not
  // render before the next one arrived was replaced (its counters are in
  // the next one's totals), so dropped / published says how much of the
  // sweep cadence a scrape can see; the render time says why.
  snapshots_published_ =
      counter(r, "infiniband_exporter_snapshots_published_total",
              "Snapshots rendered, compressed and made servable (one per sweep when the render "
              "keeps up).");
  snapshots_dropped_ =
      counter(r, "infiniband_exporter_snapshots_dropped_total",
              "Snapshots replaced by a newer one before they were rendered (the render took "
              "longer than a sweep); their counters are in the next snapshot's totals.");
  last_render_duration_ =
      gauge(r, "infiniband_exporter_last_render_duration_seconds",
            "Time taken to render and compress the last published snapshot (before this one).");
  // Text that did not change since the snapshot before is not deflated
  // again (exposition/deflate_block_cache.h): near 1 on a quiet fabric, about
  // the share of static families (port info, states, rates) on a busy one.
  last_render_reused_ratio_ =
      gauge(r, "infiniband_exporter_last_render_reused_ratio",
            "Share of the last published snapshot's text (before this one) whose compressed "
            "blocks were reused from the snapshot before it instead of compressed again.");
}

void ExporterMetrics::on_discovery(const Fabric* fabric, double seconds, bool ok) {
  discoveries_->Increment();
  if (!ok || fabric == nullptr) {
    discovery_failures_->Increment();
    return;
  }
  last_discovery_duration_->Set(seconds);
  last_discovery_timestamp_->Set(unix_seconds_now());
  discovered_ports_->Set(static_cast<double>(fabric->port_count()));
  std::array<double, 4> by_type{};
  for (const auto& n : fabric->nodes) by_type[static_cast<std::size_t>(n.type)] += 1;
  for (std::size_t t = 0; t < by_type.size(); ++t) {
    discovered_nodes_->Add({{"node_type", std::string(node_type_name(static_cast<NodeType>(t)))}})
        .Set(by_type[t]);
  }
}

void ExporterMetrics::on_discovery_started(DiscoveryReason reason) {
  const auto i = static_cast<std::size_t>(reason);
  if (i < discovery_reasons_.size()) discovery_reasons_[i]->Increment();
}

void ExporterMetrics::on_merge(const Fabric& found, const MergeOutcome& merged, bool partial) {
  discovery_smp_timeouts_->Increment(found.smp_timeouts);
  discovery_smp_errors_->Increment(found.smp_errors);
  nodes_forgotten_->Increment(static_cast<double>(merged.forgotten.size()));
  last_discovery_partial_->Set(partial ? 1 : 0);
  discovery_missing_nodes_->Set(static_cast<double>(merged.missing));
  known_nodes_->Set(merged.fabric ? static_cast<double>(merged.fabric->nodes.size()) : 0);
}

void ExporterMetrics::on_worker(bool up, std::uint64_t restarts) {
  if (worker_up_ == nullptr) {
    worker_up_ = gauge(*registry_, "infiniband_exporter_mad_worker_up",
                       "1 when the MAD worker process (which owns the umad port the "
                       "sweeps use) is running and has opened the port.");
    worker_restarts_ = counter(*registry_, "infiniband_exporter_mad_worker_restarts_total",
                               "MAD worker processes started to replace one that died or was "
                               "presumed wedged.");
  }
  worker_up_->Set(up ? 1 : 0);
  add_since(worker_restarts_, restarts, last_worker_restarts_);
}

void ExporterMetrics::on_receipts(const ReceiptsStageStats& receipts) {
  if (receipts_running_ == nullptr) {
    auto& r = *registry_;
    receipts_running_ = gauge(r, "infiniband_exporter_receipts_running_jobs",
                              "Running Slurm jobs whose fabric receipt is being built.");
    receipts_stored_ = gauge(r, "infiniband_exporter_receipts_stored",
                             "Finished job receipts kept (receipts.keep_count, keep_age).");
    receipt_write_failures_ =
        counter(r, "infiniband_exporter_receipts_write_failures_total",
                "Failed writes of receipts.jsonl or receipts-running.json in the state directory.");
  }
  receipts_running_->Set(static_cast<double>(receipts.running));
  receipts_stored_->Set(static_cast<double>(receipts.stored));
  add_since(receipt_write_failures_, receipts.write_failures, last_receipt_write_failures_);
}

void ExporterMetrics::on_routes(const RouteReaderStats& routes) {
  if (!routes_) {
    auto& r = *registry_;
    auto& smps = prometheus::BuildCounter()
                     .Name("infiniband_exporter_route_smps_total")
                     .Help(
                         "SwitchInfo and LinearForwardingTable SMP Gets the route reader sent, by "
                         "result: answered, failed (timed out or refused), cancelled (cut by the "
                         "sweep's deadline, asked again later).")
                     .Register(r);
    routes_ = std::make_unique<RouteMetrics>(RouteMetrics{
        &smps.Add({{"result", "answered"}}), &smps.Add({{"result", "failed"}}),
        &smps.Add({{"result", "cancelled"}}),
        counter(r, "infiniband_exporter_route_full_reads_total",
                "Full reads of every switch's forwarding table finished (start-up, a changed "
                "fabric, a re-route found)."),
        counter(r, "infiniband_exporter_route_table_changes_total",
                "Forwarding tables, read whole before, found changed (a re-route)."),
        gauge(r, "infiniband_exporter_route_full_read_seconds",
              "How long the last finished full read of the forwarding tables took."),
        gauge(r, "infiniband_exporter_route_tables", "Switches whose forwarding table is kept."),
        gauge(r, "infiniband_exporter_route_tables_stale",
              "Switches whose last route SMP went unanswered: their last table is kept."),
        gauge(r, "infiniband_exporter_route_tables_incomplete",
              "Switches whose forwarding table has not been read whole yet."),
        gauge(r, "infiniband_exporter_route_table_age_seconds",
              "Age of the least recently confirmed forwarding table (0: none read whole yet)."),
        RouteReaderStats{}});
  }
  RouteMetrics& m = *routes_;
  add_since(m.answered, routes.smps_answered, m.last.smps_answered);
  add_since(m.failed, routes.smps_failed, m.last.smps_failed);
  add_since(m.cancelled, routes.smps_cancelled, m.last.smps_cancelled);
  add_since(m.full_reads, routes.full_reads, m.last.full_reads);
  add_since(m.reroutes, routes.reroutes, m.last.reroutes);
  m.full_read_seconds->Set(routes.full_read_seconds);
  m.tables->Set(static_cast<double>(routes.switches));
  m.stale->Set(static_cast<double>(routes.stale));
  m.incomplete->Set(static_cast<double>(routes.incomplete));
  const bool any = routes.oldest_read_at != std::chrono::system_clock::time_point{};
  m.age->Set(any ? std::max(0.0, std::chrono::duration<double>(std::chrono::system_clock::now() -
                                                               routes.oldest_read_at)
                                     .count())
                 : 0.0);
}

void ExporterMetrics::on_http(std::uint64_t evicted, std::uint64_t refused) {
  if (http_evicted_ == nullptr) {
    http_evicted_ = counter(*registry_, "infiniband_exporter_http_connections_evicted_total",
                            "HTTP connections closed to make room for a newcomer (web limits).");
    http_refused_ = counter(*registry_, "infiniband_exporter_http_connections_refused_total",
                            "HTTP connections refused because every slot was busy.");
  }
  add_since(http_evicted_, evicted, last_http_evicted_);
  add_since(http_refused_, refused, last_http_refused_);
}

double ExporterMetrics::on_sweep(const SweepResult& sweep, std::size_t nodes_not_answering,
                                 bool overrun) {
  sweeps_->Increment();
  if (!sweep.completed) sweeps_incomplete_->Increment();
  if (overrun) sweep_overruns_->Increment();
  lid_mismatches_->Increment(static_cast<double>(sweep.lid_mismatches));
  clears_sent_->Increment(static_cast<double>(sweep.clears_sent));
  probes_withheld_->Increment(static_cast<double>(sweep.probes_withheld));
  clears_withheld_->Increment(static_cast<double>(sweep.clears_withheld));
  last_sweep_duration_->Set(sweep.duration_seconds);
  const double finished = unix_seconds_now();
  last_sweep_timestamp_->Set(finished);
  sweep_duration_->Observe(sweep.duration_seconds);
  swept_ports_->Set(static_cast<double>(sweep.ports_read));
  nodes_not_answering_->Set(static_cast<double>(nodes_not_answering));
  stale_nodes_->Set(static_cast<double>(sweep.stale_nodes));
  oldest_reading_age_->Set(sweep.oldest_reading_age_seconds);
  return finished;
}

void ExporterMetrics::update_totals(const MadEngineStats& mad, const AccumulatorStats& acc) {
  totals_->set(mad, acc);
}

void ExporterMetrics::on_publisher(std::uint64_t published, std::uint64_t dropped,
                                   double last_render_seconds, std::uint64_t reused_bytes,
                                   std::uint64_t deflated_bytes) {
  add_since(snapshots_published_, published, last_published_);
  add_since(snapshots_dropped_, dropped, last_dropped_);
  last_render_duration_->Set(last_render_seconds);
  const std::uint64_t text = reused_bytes + deflated_bytes;
  last_render_reused_ratio_->Set(
      text == 0 ? 0.0 : static_cast<double>(reused_bytes) / static_cast<double>(text));
}

std::string ExporterMetrics::serialize() const {
  // The registry's families, then the totals the engine and the
  // accumulator keep themselves (daemon/engine_totals.h).
  auto families = registry_->Collect();
  auto totals = totals_->Collect();
  families.insert(families.end(), std::make_move_iterator(totals.begin()),
                  std::make_move_iterator(totals.end()));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace ibfx
