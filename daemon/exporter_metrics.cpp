#include "daemon/exporter_metrics.h"

#include <prometheus/text_serializer.h>

#include <chrono>

#include "daemon/counter_families.h"

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
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
}  // namespace

ExporterMetrics::ExporterMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  prometheus::BuildGauge()
      .Name("infiniband_exporter_build_info")
      .Help("Build information of ibfabric_exporter; value is always 1.")
      .Register(r)
      .Add({{"version", IBFX_VERSION}})
      .Set(1);
  auto& mads = prometheus::BuildCounter()
                   .Name("infiniband_exporter_mad_requests_total")
                   .Help(
                       "MAD requests completed (PMA reads and the sweep's NodeInfo LID "
                       "checks), by result (ok, timeout after all retries, error status or "
                       "send failure).")
                   .Register(r);
  mad_ok_ = &mads.Add({{"result", "ok"}});
  mad_timeout_ = &mads.Add({{"result", "timeout"}});
  mad_error_ = &mads.Add({{"result", "error"}});
  mad_optional_ = counter(r, "infiniband_exporter_optional_probes_unanswered_total",
                          "Optional PMA probes (e.g. PortSamplesControl, which ibsim lacks) that "
                          "got no usable answer; not counted as MAD failures.");
  mad_retries_ =
      counter(r, "infiniband_exporter_mad_retries_total", "MAD attempts repeated after a timeout.");
  mad_late_ = counter(r, "infiniband_exporter_mad_late_responses_total",
                      "Responses that matched no outstanding request (arrived after a timeout).");
  sweeps_ = counter(r, "infiniband_exporter_sweeps_total", "PMA sweeps run.");
  sweeps_incomplete_ = counter(r, "infiniband_exporter_sweeps_incomplete_total",
                               "Sweeps cut short by their time budget.");
  // A LID that answered as another node or port (the SM moved it): the
  // readings taken there were dropped and discovery runs again.
  lid_mismatches_ = counter(r, "infiniband_exporter_lid_mismatches_total",
                            "LIDs found answering as another node or port; readings dropped.");
  sweep_overruns_ = counter(r, "infiniband_exporter_sweep_overruns_total",
                            "Sweeps that took longer than the sweep interval.");
  discoveries_ = counter(r, "infiniband_exporter_discoveries_total", "Fabric discoveries run.");
  discovery_failures_ =
      counter(r, "infiniband_exporter_discovery_failures_total", "Fabric discoveries that failed.");
  clears_sent_ = counter(r, "infiniband_exporter_clear_requests_total",
                         "PortCounters Set requests sent to clear counters near saturation.");
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
  stale_nodes_ =
      gauge(r, "infiniband_exporter_stale_nodes",
            "Nodes the last sweep's budget did not let it finish: their series and node_up are "
            "from an earlier sweep; the next sweep starts with them.");
  oldest_reading_age_ =
      gauge(r, "infiniband_exporter_oldest_node_reading_age_seconds",
            "Age of the oldest reading among the nodes swept (a sweep cut short leaves some "
            "older than one interval).");
  mad_cancelled_ =
      counter(r, "infiniband_exporter_mad_requests_cancelled_total",
              "MAD requests a sweep's budget ended before they were answered (not sent, or "
              "in flight): not asked, not counted as timeouts.");
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
  // The publisher (daemon/snapshot_publisher.h): a snapshot it could not
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
  sweep_duration_ = &prometheus::BuildHistogram()
                         .Name("infiniband_exporter_sweep_duration_seconds")
                         .Help("Distribution of PMA sweep durations.")
                         .Register(r)
                         .Add({}, prometheus::Histogram::BucketBoundaries{0.05, 0.1, 0.25, 0.5, 1,
                                                                          2.5, 5, 10, 30, 60});
  auto& sat = prometheus::BuildCounter()
                  .Name("infiniband_exporter_counters_saturated_total")
                  .Help("Times a narrow device counter was seen at its maximum, by counter.")
                  .Register(r);
  auto& ext = prometheus::BuildCounter()
                  .Name("infiniband_exporter_counters_reset_externally_total")
                  .Help(
                      "Times a device counter went down without this daemon clearing it "
                      "(cleared out of band), by counter.")
                  .Register(r);
  auto& clr = prometheus::BuildCounter()
                  .Name("infiniband_exporter_counters_cleared_total")
                  .Help("Counters cleared by this daemon at the clear threshold, by counter.")
                  .Register(r);
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    const auto c = static_cast<Counter>(i);
    const std::string name(counter_short_name(c));
    if (counter_info(c).narrow_bits != 0) saturations_[i] = &sat.Add({{"counter", name}});
    external_clears_[i] = &ext.Add({{"counter", name}});
    if (counter_info(c).select_bit >= 0) clears_[i] = &clr.Add({{"counter", name}});
  }
}

void ExporterMetrics::on_discovery(const Fabric* fabric, double seconds, bool ok) {
  discoveries_->Increment();
  if (!ok || fabric == nullptr) {
    discovery_failures_->Increment();
    return;
  }
  last_discovery_duration_->Set(seconds);
  last_discovery_timestamp_->Set(now_seconds());
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

void ExporterMetrics::on_sweep(const SweepResult& sweep, std::size_t nodes_not_answering,
                               bool overrun) {
  sweeps_->Increment();
  if (!sweep.completed) sweeps_incomplete_->Increment();
  if (overrun) sweep_overruns_->Increment();
  lid_mismatches_->Increment(static_cast<double>(sweep.lid_mismatches));
  clears_sent_->Increment(static_cast<double>(sweep.clears_sent));
  probes_withheld_->Increment(static_cast<double>(sweep.probes_withheld));
  clears_withheld_->Increment(static_cast<double>(sweep.clears_withheld));
  last_sweep_duration_->Set(sweep.duration_seconds);
  last_sweep_timestamp_->Set(now_seconds());
  sweep_duration_->Observe(sweep.duration_seconds);
  swept_ports_->Set(static_cast<double>(sweep.ports_read));
  nodes_not_answering_->Set(static_cast<double>(nodes_not_answering));
  stale_nodes_->Set(static_cast<double>(sweep.stale_nodes));
  oldest_reading_age_->Set(sweep.oldest_reading_age_seconds);
}

void ExporterMetrics::update_totals(const MadEngineStats& mad, const AccumulatorStats& acc) {
  auto add = [](prometheus::Counter* c, std::uint64_t now, std::uint64_t before) {
    if (c != nullptr && now > before) c->Increment(static_cast<double>(now - before));
  };
  add(mad_ok_, mad.ok, last_mad_.ok);
  add(mad_timeout_, mad.timeouts, last_mad_.timeouts);
  add(mad_error_, mad.errors, last_mad_.errors);
  add(mad_retries_, mad.retries, last_mad_.retries);
  add(mad_late_, mad.late_or_unknown, last_mad_.late_or_unknown);
  add(mad_optional_, mad.optional_unanswered, last_mad_.optional_unanswered);
  add(mad_cancelled_, mad.cancelled, last_mad_.cancelled);
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    add(saturations_[i], acc.saturations[i], last_acc_.saturations[i]);
    add(external_clears_[i], acc.external_clears[i], last_acc_.external_clears[i]);
    add(clears_[i], acc.clears[i], last_acc_.clears[i]);
  }
  last_mad_ = mad;
  last_acc_ = acc;
}

void ExporterMetrics::on_publisher(std::uint64_t published, std::uint64_t dropped,
                                   double last_render_seconds) {
  add_since(snapshots_published_, published, last_published_);
  add_since(snapshots_dropped_, dropped, last_dropped_);
  last_render_duration_->Set(last_render_seconds);
}

std::string ExporterMetrics::serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace ibfx
