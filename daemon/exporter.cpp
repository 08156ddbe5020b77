#include "daemon/exporter.h"

#include <boost/asio/post.hpp>
#include <algorithm>
#include <future>
#include <iostream>

#include "daemon/log.h"
#include "daemon/systemd_notify.h"

#include <map>

namespace ibfx {

Exporter::Exporter(Config config, NodeNameMap names, std::unique_ptr<MadTransport> transport,
                   DiscoverFn discover, AnalysisConfig analysis)
    : config_(std::move(config)),
      names_(std::move(names)),
      transport_(std::move(transport)),
      discover_(std::move(discover)),
      engine_(*transport_, MadEngineLimits{config_.mad.global_inflight,
                                           config_.mad.per_node_inflight, config_.mad.timeout,
                                           config_.mad.retries, config_.mad.max_mads_per_second}),
      sweeper_(engine_, accumulator_),
      analysis_config_(std::move(analysis)) {
  discovery_interval_ms_ = config_.discovery.interval.count();
}

Exporter::~Exporter() { stop(); }

std::shared_ptr<const Fabric> Exporter::fabric() const {
  std::lock_guard lock(fabric_mu_);
  return fabric_;
}

bool Exporter::discover_now() {
  const std::uint64_t generation = health_ ? health_->generation() : 0;
  DiscoveryResult r = discover_();
  {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_discovery(r.fabric.get(), r.fabric ? r.fabric->discovery_seconds : 0,
                          r.fabric != nullptr);
  }
  if (!r.fabric) {
    log_warn("discovery failed: " + r.error);
    return false;
  }
  log_info("discovered " + std::to_string(r.fabric->nodes.size()) + " nodes, " +
           std::to_string(r.fabric->port_count()) + " ports in " +
           std::to_string(r.fabric->discovery_seconds) + " s");
  {
    std::lock_guard lock(fabric_mu_);
    fabric_ = merge_missing(std::move(r.fabric), fabric_.get());
  }
  last_discovery_ = std::chrono::steady_clock::now();
  if (health_ && generation != fabric_generation_) {
    // Through a new worker, right after the fabric came back, the SM may not
    // have assigned LIDs yet: sweeping then would skip every switch. Look
    // again soon, for a while, before sweeping what we have.
    auto f = fabric();
    const bool unaddressed = std::any_of(f->nodes.begin(), f->nodes.end(), [](const FabricNode& n) {
      return n.present && n.type == NodeType::kSwitch && n.lid == 0;
    });
    if (unaddressed && ++unaddressed_discoveries_ < 10) {
      log_info("switches without a LID yet; discovering again before sweeping");
      request_discovery();
    } else {
      unaddressed_discoveries_ = 0;
      fabric_generation_ = generation;
    }
  }
  fabric_cv_.notify_all();
  return true;
}

SweepOptions Exporter::sweep_options() const {
  SweepOptions o;
  o.include_hcas = config_.counters.include_hcas;
  o.include_switch_port0 = config_.counters.include_switch_port0;
  o.clear.enabled = config_.counters.clear_on_threshold;
  o.clear.threshold = config_.counters.clear_threshold;
  o.shard_count = static_cast<std::uint32_t>(config_.sharding.count);
  o.shard_index = static_cast<std::uint32_t>(config_.sharding.index);
  // A sweep may use at most its interval (and never less than a few MAD
  // timeouts), so a sick fabric cannot stall the schedule.
  o.budget = std::max(config_.sweep_interval,
                      std::chrono::milliseconds(config_.mad.timeout * (config_.mad.retries + 1) * 4));
  return o;
}

bool Exporter::sweep_now() {
  auto f = fabric();
  if (!f) return false;
  SweepResult r = sweeper_.sweep(*f, sweep_options());
  const bool overrun = r.duration_seconds * 1000.0 > static_cast<double>(config_.sweep_interval.count());
  publish(std::move(f), std::move(r), overrun);
  return true;
}

void Exporter::publish(std::shared_ptr<const Fabric> f, SweepResult sweep, bool overrun) {
  std::size_t not_answering = 0;
  for (const auto& n : sweep.nodes) not_answering += (n.swept && !n.answered) ? 1 : 0;
  // A node that stops answering or a link that went down means the
  // topology changed: look again soon instead of at the next interval.
  const std::uint64_t downed =
      accumulator_.stats().link_downed_deltas;
  if (not_answering > 0 || downed != link_downed_seen_) request_discovery();
  link_downed_seen_ = downed;
  ++sweeps_;
  std::string own;
  {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_sweep(sweep, not_answering, overrun);
    metrics_.update_totals(engine_.stats(), accumulator_.stats());
    own = metrics_.serialize();
  }
  if (!sweep.completed || not_answering > 0) {
    log_warn("sweep " + std::to_string(sweeps_) + ": " + std::to_string(not_answering) +
             " nodes not answering, " + std::to_string(sweep.mads_timeout) + " MAD timeouts" +
             (sweep.completed ? "" : ", cut short by its budget"));
  } else {
    log_debug("sweep " + std::to_string(sweeps_) + ": " + std::to_string(sweep.ports_read) +
              " ports in " + std::to_string(sweep.duration_seconds) + " s");
  }
  ExporterTotals totals;
  totals.mad = engine_.stats();
  totals.accumulator = accumulator_.stats();
  totals.sweeps = sweeps_;
  auto snap = build_snapshot(f, sweep, accumulator_, names_, totals);
  if (f) analyze_sweep(*snap, sweep);
  snap->exporter_metrics_text = std::move(own);
  snap->exporting = config_.exporting;
  // Render and compress here, on the sweep thread: a scrape only reads.
  snap->gzip();
  store_.publish(std::move(snap));
  // systemd (Type=notify): READY once the first snapshot is served, then a
  // one-line summary of every sweep for `systemctl status`.
  if (!ready_.exchange(true)) notify_ready();
  notify_status("last sweep: " + std::to_string(sweep.ports_read) + " ports in " +
                std::to_string(sweep.duration_seconds).substr(0, 5) + " s, " +
                std::to_string(not_answering) + " nodes not answering");
  // What the snapshot shows, for republish_stale() while the worker is down.
  last_sweep_ = std::move(sweep);
}

std::vector<std::string> Exporter::reload(Config config, NodeNameMap names,
                                          AnalysisConfig analysis) {
  std::vector<std::string> needs_restart;
  if (config.listen_address != config_.listen_address) needs_restart.push_back("listen_address");
  if (config.ca != config_.ca || config.ca_port != config_.ca_port) {
    needs_restart.push_back("ca/ca_port");
  }
  auto apply = [this, config = std::move(config), names = std::move(names),
                analysis = std::move(analysis)]() mutable {
    const std::string listen = config_.listen_address;
    const std::string ca = config_.ca;
    const int ca_port = config_.ca_port;
    const bool rearm = config.sweep_interval != config_.sweep_interval;
    config_ = std::move(config);
    config_.listen_address = listen;  // the running listener and CA stay
    config_.ca = ca;
    config_.ca_port = ca_port;
    names_ = std::move(names);
    analysis_config_ = std::move(analysis);
    analyzer_.reclassify();  // with the new names and overrides
    engine_.set_limits(MadEngineLimits{config_.mad.global_inflight, config_.mad.per_node_inflight,
                                       config_.mad.timeout, config_.mad.retries,
                                       config_.mad.max_mads_per_second});
    discovery_interval_ms_ = config_.discovery.interval.count();
    if (rearm && collector_thread_.joinable()) {
      next_sweep_ = std::chrono::steady_clock::now() + config_.sweep_interval;
      arm_timer(next_sweep_);
    }
    log_info("configuration reloaded");
  };
  if (collector_thread_.joinable() && !stopping_) {
    // Run between two sweeps on the sweep thread, which owns this state.
    std::promise<void> done;
    auto fut = done.get_future();
    boost::asio::post(collector_io_, [&apply, &done] {
      apply();
      done.set_value();
    });
    fut.wait();
  } else {
    apply();
  }
  return needs_restart;
}

void Exporter::request_discovery() {
  discovery_requested_ = true;
  stop_cv_.notify_all();
}

void Exporter::analyze_sweep(Snapshot& snap, const SweepResult& sweep) {
  const std::size_t wait = static_cast<std::size_t>(Counter::kTransmitWait);
  std::vector<SweepPortTotals> ports;
  ports.reserve(snap.ports.size());
  for (PortView& v : snap.ports) {
    if (const PmaCapabilities* caps = sweeper_.capabilities(snap.fabric->nodes[v.node].guid)) {
      v.device_tick = caps->sample_tick;
    }
    const bool read = v.node < sweep.port_read.size() && sweep.port_read[v.node][v.port_index];
    ports.push_back({v.node, v.port_index, v.device_tick, read, v.present[wait] != 0, &v.totals});
  }
  snap.analysis =
      analyzer_.analyze(snap.fabric, snap.node_names, ports, sweep.started_at, analysis_config_);
  snap.topology = snap.analysis.topology;
}

void Exporter::discovery_loop() {
  while (!stopping_) {
    {
      std::unique_lock lock(stop_mu_);
      // Until the first success, retry every few seconds (the SM may still
      // be bringing the subnet up); then refresh at the configured interval,
      // or sooner when a sweep saw the fabric change.
      // While nodes are missing (unplugged, link down), look again every
      // kDegradedRediscovery: nothing else tells a PMA poller that a link
      // came back.
      auto f = fabric();
      auto wait = f ? std::chrono::milliseconds(discovery_interval_ms_.load())
                    : std::chrono::milliseconds(2000);
      if (f && std::any_of(f->nodes.begin(), f->nodes.end(),
                           [](const FabricNode& n) { return !n.present; })) {
        wait = std::min<std::chrono::milliseconds>(wait, kDegradedRediscovery);
      }
      stop_cv_.wait_for(lock, wait,
                        [this] { return stopping_.load() || discovery_requested_.load(); });
      if (stopping_) return;
    }
    if (discovery_requested_.exchange(false)) {
      // Rate-limit change-triggered discoveries: a flapping link must not
      // turn discovery into a busy loop of SMPs.
      const auto earliest = last_discovery_.load() + kMinRediscoverySpacing;
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_until(lock, earliest, [this] { return stopping_.load(); })) return;
    }
    discover_now();
  }
}

void Exporter::arm_timer(std::chrono::steady_clock::time_point when) {
  timer_.expires_at(when);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopping_) on_timer();
  });
}

void Exporter::on_timer() {
  const auto started = std::chrono::steady_clock::now();
  if (!fabric()) {
    // Start-up: the only time a sweep waits for discovery.
    arm_timer(started + std::chrono::milliseconds(200));
    return;
  }
  if (health_ && !transport_ready()) {
    republish_stale();
    next_sweep_ += config_.sweep_interval;
    if (next_sweep_ < started) next_sweep_ = started;
    arm_timer(next_sweep_);
    return;
  }
  auto f = fabric();
  SweepResult r = sweeper_.sweep(*f, sweep_options());
  if (health_) {
    health_->after_sweep(r.mads_sent, r.mads_ok);
    stale_worker_state_.reset();
    std::lock_guard lock(metrics_mu_);
    metrics_.on_worker(health_->up(), health_->restarts());
  }
  next_sweep_ += config_.sweep_interval;
  const auto now = std::chrono::steady_clock::now();
  const bool overrun = next_sweep_ < now;
  publish(std::move(f), std::move(r), overrun);
  // Keep a fixed cadence; after an overrun start again right away rather
  // than piling up missed ticks.
  if (overrun) next_sweep_ = now;
  arm_timer(next_sweep_);
}

bool Exporter::transport_ready() {
  if (!health_->up()) return false;
  if (health_->generation() == fabric_generation_) return true;
  request_discovery();
  return false;
}

void Exporter::republish_stale() {
  // The same data as the last snapshot (the accumulator has not moved), with
  // the worker's state updated: last_sweep_timestamp stays, so its age grows
  // and says how stale the counters are.
  const auto previous = store_.current();
  if (!previous || !last_sweep_) return;
  const std::pair<bool, std::uint64_t> worker{health_->up(), health_->restarts()};
  if (stale_worker_state_ == worker) return;
  stale_worker_state_ = worker;
  std::string own;
  {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_worker(worker.first, worker.second);
    own = metrics_.serialize();
  }
  auto snap =
      build_snapshot(previous->fabric, *last_sweep_, accumulator_, names_, previous->totals);
  snap->topology = previous->topology;
  snap->analysis = previous->analysis;
  snap->sweep_timestamp_seconds = previous->sweep_timestamp_seconds;
  snap->exporter_metrics_text = std::move(own);
  snap->exporting = previous->exporting;
  snap->gzip();  // rendered here, as in publish(): a scrape only reads
  store_.publish(std::move(snap));
}

void Exporter::start() {
  stopping_ = false;
  // First discovery happens right away on the discovery thread.
  discovery_thread_ = std::thread([this] {
    if (!discover_now()) log_warn("initial discovery failed; retrying in the background");
    discovery_loop();
  });
  next_sweep_ = std::chrono::steady_clock::now();
  collector_thread_ = std::thread([this] {
    arm_timer(next_sweep_);
    collector_io_.run();
  });
}

void Exporter::stop() {
  if (stopping_.exchange(true)) return;
  stop_cv_.notify_all();
  boost::asio::post(collector_io_, [this] { timer_.cancel(); });
  collector_io_.stop();
  if (collector_thread_.joinable()) collector_thread_.join();
  if (discovery_thread_.joinable()) discovery_thread_.join();
}

}  // namespace ibfx
