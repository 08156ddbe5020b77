#include "daemon/exporter.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <future>
#include <map>

#include "base/log.h"

namespace ibfx {

namespace {
ForgetPolicy forget_policy(const DiscoveryConfig& c) {
  return ForgetPolicy{c.forget_after_discoveries, c.forget_after};
}

// The render and its deflate threads yield to the sweep thread and the
// MAD worker: on 2 cores, a render at the same weight stretched the sweeps
// of a 1 s interval (docs/benchmarks.md).
constexpr int kPublisherNice = 10;

MadEngineLimits mad_limits(const MadConfig& mad) {
  return MadEngineLimits{mad.global_inflight, mad.per_node_inflight, mad.timeout, mad.retries,
                         mad.max_mads_per_second};
}
}  // namespace

Exporter::Exporter(Config config, NodeNameMap names, std::unique_ptr<MadTransport> transport,
                   DiscoverFn discover, AnalysisConfig analysis)
    : config_(std::move(config)),
      names_(std::move(names)),
      transport_(std::move(transport)),
      discover_(std::move(discover)),
      engine_(*transport_, mad_limits(config_.mad)),
      sweeper_(engine_, accumulator_),
      analysis_config_(std::move(analysis)),
      merger_(forget_policy(config_.discovery)),
      pacer_(DiscoveryPacing{.interval = config_.discovery.interval}),
      // Rendering is the publisher's step: Snapshot::compress() renders each
      // scrape group once and compresses it once; every scrape, of any
      // selection of groups or nodes, serves that and never renders.
      publisher_(
          store_, [](const Snapshot& snap) { snap.compress(); },
          [this](const Snapshot& snap, const PublisherStats& stats) { on_published(snap, stats); },
          kPublisherNice) {}

Exporter::~Exporter() { stop(); }

std::shared_ptr<const Fabric> Exporter::fabric() const {
  std::lock_guard lock(fabric_mu_);
  return fabric_;
}

bool Exporter::discover_now() {
  const std::uint64_t generation = health_ ? health_->generation() : 0;
  DiscoveryResult r = discover_();
  if (!r.fabric) {
    {
      std::lock_guard lock(metrics_mu_);
      metrics_.on_discovery(nullptr, 0, false);
    }
    pacer_.finished(false, false);
    log_warn("discovery failed: " + r.error);
    return false;
  }
  const Fabric& found = *r.fabric;
  // Merged, never replaced: a node this discovery missed is kept (and still
  // swept) until it has been missing long enough to be forgotten.
  MergeOutcome merged = merger_.merge(found);
  const bool partial = found.smp_timeouts > 0 || found.smp_errors > 0 || merged.missing > 0;
  {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_discovery(&found, found.discovery_seconds, true);
    metrics_.on_merge(found, merged, partial);
  }
  pacer_.finished(true, partial);
  const std::string summary = "discovered " + std::to_string(found.nodes.size()) + " nodes, " +
                              std::to_string(found.port_count()) + " ports in " +
                              std::to_string(found.discovery_seconds) + " s";
  log_info(summary);
  if (!ready_.load()) status(summary + "; first sweep running");
  if (partial) {
    log_warn("partial discovery: " + std::to_string(found.smp_timeouts) + " SMP timeouts, " +
             std::to_string(found.smp_errors) + " SMP errors; " + std::to_string(merged.missing) +
             " known nodes and " + std::to_string(merged.ports_kept) +
             " ports not found, kept as last seen and still swept; retrying in " +
             std::to_string(std::chrono::duration<double>(pacer_.partial_backoff()).count()) +
             " s at most");
  }
  for (const ForgottenNode& n : merged.forgotten) {
    log_warn("forgetting " + std::string(node_type_name(n.type)) + " \"" + n.description + "\" (" +
             guid_hex(n.guid) + "): missing from " +
             std::to_string(config_.discovery.forget_after_discoveries) +
             " discoveries in a row and for " + format_duration(config_.discovery.forget_after) +
             "; its series end");
  }
  {
    std::lock_guard lock(fabric_mu_);
    fabric_ = std::move(merged.fabric);
  }
  if (health_ && generation != fabric_generation_) {
    // Through a new worker, right after the fabric came back, the SM may not
    // have assigned LIDs yet: sweeping then would skip every switch. Look
    // again soon, for a while, before sweeping what we have. (Judged on what
    // this discovery saw, not on the LIDs the merge kept.)
    const bool unaddressed =
        std::any_of(found.nodes.begin(), found.nodes.end(),
                    [](const FabricNode& n) { return n.type == NodeType::kSwitch && n.lid == 0; });
    if (unaddressed && ++unaddressed_discoveries_ < 10) {
      log_info("switches without a LID yet; discovering again before sweeping");
      request_discovery(DiscoveryReason::kWorkerRestart);
    } else {
      unaddressed_discoveries_ = 0;
      fabric_generation_ = generation;
    }
  }
  return true;
}

SweepOptions Exporter::sweep_options(const Fabric& fabric) {
  SweepOptions o;
  o.guard = sm_guard(fabric);
  o.include_hcas = config_.counters.include_hcas;
  o.include_switch_port0 = config_.counters.include_switch_port0;
  o.clear.enabled = config_.counters.clear_on_threshold;
  o.clear.threshold = config_.counters.clear_threshold;
  o.groups.error_details = config_.counters.error_details;
  o.groups.vl_xmit_wait = config_.counters.vl_transmit_wait;
  o.groups.congestion_control = config_.counters.congestion_control;
  o.shard_count = static_cast<std::uint32_t>(config_.sharding.count);
  o.shard_index = static_cast<std::uint32_t>(config_.sharding.index);
  // A sweep may use its interval less what the sweep thread does after it
  // (snapshot and analysis, as long as the last time; the render runs on
  // the publisher's thread), so that sweep + analysis fit the interval and a
  // slow or sick fabric cannot stall the schedule. Never less than two
  // whole retry chains (a silent node, asked first, can still be found
  // silent), but no more: at the default 100 ms x 3 attempts, four chains
  // (1.2 s) made a 1 s interval impossible. What the budget cuts off, the
  // next sweep reads first (round robin), so nothing is marked down for it.
  const auto after_sweep = std::chrono::duration_cast<std::chrono::milliseconds>(after_sweep_);
  o.budget =
      std::max(config_.sweep_interval - after_sweep,
               std::chrono::milliseconds(config_.mad.timeout * (config_.mad.retries + 1) * 2));
  return o;
}

SmGuard Exporter::sm_guard(const Fabric& fabric) {
  const LocalPort local = health_ ? health_->local_port() : LocalPort{};
  if (config_.counters.probe_sm_and_local_ports) {
    if (!guard_opted_out_logged_) {
      guard_opted_out_logged_ = true;
      log_warn(
          "counters.probe_sm_and_local_ports is on: optional MADs (the PortSamplesControl probe, "
          "counter clears) also go to the subnet manager's node and this node's own HCA; under "
          "ibsim that kills opensm (docs/safety.md)");
    }
    guarded_.clear();
    return {};
  }
  guard_opted_out_logged_ = false;
  SmGuard guard(fabric, local);
  if (fabric.sm_lid == 0 && local.sm_lid == 0 && !sm_lid_unknown_logged_) {
    sm_lid_unknown_logged_ = true;
    log_warn(
        "the master SM's LID is unknown (PortInfo:MasterSMLID is 0 on the local port): no "
        "subnet manager yet? Optional MADs still skip nodes that run an SM and this node's "
        "own HCA");
  }
  // Once per node and reason: the operator learns what is withheld from
  // whom and why, not every sweep.
  if (guard.nodes() != guarded_) {
    for (const auto& [guid, why] : guard.nodes()) {
      const auto known = guarded_.find(guid);
      if (known != guarded_.end() && known->second == why) continue;
      const FabricNode* node = fabric.find(guid);
      std::string name = node != nullptr ? node->description : std::string();
      if (const auto it = names_.find(guid); it != names_.end()) name = it->second;
      std::string line =
          "not sending optional MADs (the PortSamplesControl probe, counter-group probes, counter "
          "clears) to ";
      line += name;
      line += " (" + guid_hex(guid) + ", LID ";
      line += std::to_string(node != nullptr ? node->lid : 0);
      line += "): ";
      line += why;
      line += "; its counters are read as usual; counters.probe_sm_and_local_ports allows them";
      log_info(line);
    }
    guarded_ = guard.nodes();
  }
  return guard;
}

void Exporter::drop_forgotten() {
  // A forgotten node's totals go with it: should it come back, its series
  // start again rather than resume from totals hours old.
  for (const ForgottenNode& node : merger_.take_forgotten()) {
    for (const std::uint8_t port : node.ports) {
      accumulator_.forget(PortKey{node.guid, port});
      analyzer_.forget(PortKey{node.guid, port});
    }
    sweeper_.forget(node.guid);
  }
}

bool Exporter::sweep_now() {
  drop_forgotten();
  auto f = fabric();
  if (!f) return false;
  SweepResult r = sweeper_.sweep(*f, sweep_options(*f));
  const bool overrun =
      r.duration_seconds * 1000.0 > static_cast<double>(config_.sweep_interval.count());
  publish(f, std::move(r), overrun);
  // Synchronous for its callers (--once, tests, benchmarks): the snapshot
  // is served when it returns.
  publisher_.flush();
  return true;
}

void Exporter::publish(const std::shared_ptr<const Fabric>& f, SweepResult sweep, bool overrun) {
  const auto started = std::chrono::steady_clock::now();
  // Down means asked and silent: a node the budget did not let the sweep
  // finish is not counted (it keeps its last state).
  std::size_t not_answering = 0;
  bool went_silent = false;
  for (std::size_t n = 0; n < sweep.nodes.size(); ++n) {
    const NodeSweep& ns = sweep.nodes[n];
    not_answering += (ns.swept && ns.reached && !ns.answered) ? 1 : 0;
    went_silent = went_silent || ns.went_silent;
    // A kept node that answers at its last LID, confirmed by NodeInfo, is
    // evidently still there, whatever the discoveries say.
    if (f && !f->nodes[n].present && ns.answered && ns.lid_confirmed) {
      merger_.note_answered(f->nodes[n].guid);
    }
  }
  // A LID answering as another node, a link that went down, or a node that
  // answered and now answers nothing, means the topology changed: look
  // again soon (the pacer spaces such requests and backs off while they keep
  // coming). A sweep cut short, or a node that stays silent, is no such
  // sign: under MAD loss it would make discovery a storm of SMPs.
  const std::uint64_t downed = accumulator_.stats().link_downed_deltas;
  if (sweep.lid_mismatches > 0) request_discovery(DiscoveryReason::kLidMismatch);
  if (downed != link_downed_seen_) request_discovery(DiscoveryReason::kLinkDown);
  if (went_silent) request_discovery(DiscoveryReason::kNodeSilent);
  link_downed_seen_ = downed;
  ++sweeps_;
  std::string own;
  {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_sweep(sweep, not_answering, overrun);
    metrics_.update_totals(engine_.stats(), accumulator_.stats());
    if (http_stats_) {
      const auto [evicted, refused] = http_stats_();
      metrics_.on_http(evicted, refused);
    }
    const PublisherStats published = publisher_.stats();
    metrics_.on_publisher(published.published, published.dropped, published.last_render_seconds);
    own = metrics_.serialize();
  }
  log_sweep(sweep, not_answering, overrun);
  auto snap = assemble(f, sweep, std::move(own), nullptr);
  // Rendered and compressed on the publisher's thread, while the next sweep
  // runs: a scrape only reads what it published.
  publisher_.submit(std::move(snap));
  after_sweep_ = std::chrono::steady_clock::now() - started;
  // What the snapshot shows, for republish_stale() while the worker is down.
  last_sweep_ = std::move(sweep);
}

std::shared_ptr<Snapshot> Exporter::assemble(std::shared_ptr<const Fabric> f,
                                             const SweepResult& sweep, std::string own_metrics,
                                             const Snapshot* previous) {
  auto snap = build_snapshot(std::move(f), sweep, accumulator_, names_);
  if (previous != nullptr) {
    // The same sweep again: its analysis and timestamp stay (their age says
    // how stale the counters are).
    snap->topology = previous->topology;
    snap->analysis = previous->analysis;
    snap->lanes = previous->lanes;
    snap->sweep_timestamp_seconds = previous->sweep_timestamp_seconds;
    snap->exporting = previous->exporting;
  } else {
    if (snap->fabric) {
      snap->lanes = lane_totals(*snap->fabric, accumulator_.lanes());
      analyze_sweep(*snap, sweep);
    }
    snap->exporting = config_.exporting;
  }
  snap->exporter_metrics_text = std::move(own_metrics);
  return snap;
}

void Exporter::on_published(const Snapshot& snap, const PublisherStats& stats) {
  // Publisher thread. node_status holds what the sweep said of each node.
  // (bench/daemon_cadence.h reads this line.)
  log_debug("published snapshot " + std::to_string(stats.last_sequence) +
            ": rendered and compressed in " + std::to_string(stats.last_render_seconds) + " s, " +
            std::to_string(stats.dropped) + " dropped so far");
  std::size_t not_answering = 0;
  for (const NodeSweep& ns : snap.node_status) {
    not_answering += (ns.swept && ns.reached && !ns.answered) ? 1 : 0;
  }
  const std::string summary = std::to_string(snap.sweep.ports_read) + " ports in " +
                              std::to_string(snap.sweep.duration_seconds).substr(0, 5) + " s, " +
                              std::to_string(not_answering) + " nodes not answering";
  // /-/ready turns 200 with the first snapshot. systemd heard READY=1 when
  // the listener came up (daemon/main.cpp): waiting for the first sweep of a
  // large fabric would hold `systemctl start` and `apt install` hostage.
  if (!ready_.exchange(true)) log_info("first sweep published (/-/ready is now 200): " + summary);
  // A one-line summary of every sweep (for `systemctl status`, in main).
  status("last sweep: " + summary);
}

void Exporter::status(const std::string& text) {
  if (status_) status_(text);
}

std::vector<std::string> Exporter::reload(Config config, NodeNameMap names,
                                          AnalysisConfig analysis) {
  std::vector<std::string> needs_restart;
  if (config.listen_address != config_.listen_address) needs_restart.push_back("listen_address");
  if (config.telemetry_path != config_.telemetry_path) needs_restart.push_back("telemetry_path");
  if (config.web != config_.web) needs_restart.push_back("web");
  if (config.ca != config_.ca || config.ca_port != config_.ca_port) {
    needs_restart.push_back("ca/ca_port");
  }
  auto apply = [this, config = std::move(config), names = std::move(names),
                analysis = std::move(analysis)]() mutable {
    const std::string listen = config_.listen_address;
    const WebServerConfig web = config_.web;
    const std::string ca = config_.ca;
    const int ca_port = config_.ca_port;
    const bool rearm = config.sweep_interval != config_.sweep_interval;
    config_ = std::move(config);
    config_.listen_address = listen;  // the running listener and CA stay
    config_.web = web;
    config_.ca = ca;
    config_.ca_port = ca_port;
    names_ = std::move(names);
    analysis_config_ = std::move(analysis);
    analyzer_.reclassify();  // with the new names and overrides
    engine_.set_limits(mad_limits(config_.mad));
    pacer_.set_interval(config_.discovery.interval);
    merger_.set_policy(forget_policy(config_.discovery));
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

void Exporter::request_discovery(DiscoveryReason reason) {
  pacer_.request(reason);
  stop_cv_.notify_all();
}

void Exporter::log_sweep(const SweepResult& sweep, std::size_t not_answering, bool overrun) {
  // Under MAD loss or with an interval shorter than the fabric needs, every
  // sweep has something to say: say it once a minute, summed up.
  using namespace std::chrono_literals;
  const auto now = std::chrono::steady_clock::now();
  ++trouble_.sweeps;
  trouble_.overruns += overrun ? 1 : 0;
  trouble_.cut_short += sweep.completed ? 0 : 1;
  const std::string line =
      "sweep " + std::to_string(sweeps_) + ": " + std::to_string(sweep.ports_read) + " ports in " +
      std::to_string(sweep.duration_seconds) + " s, " + std::to_string(not_answering) +
      " nodes not answering, " + std::to_string(sweep.mads_timeout) + " MAD timeouts" +
      (sweep.completed ? ""
                       : ", cut short by its budget with " + std::to_string(sweep.stale_nodes) +
                             " nodes not reached (kept as they were)");
  // Snapshots the publisher dropped: rendering and compressing one takes
  // longer than a sweep, so not every sweep is served (the counters still
  // are: totals carry into the next one).
  const std::uint64_t dropped = publisher_.stats().dropped;
  const bool trouble =
      !sweep.completed || overrun || not_answering > 0 || dropped != trouble_.dropped_seen;
  if (!trouble || now - trouble_.last_logged < 60s) {
    log_debug(line);
    return;
  }
  std::string summary = line;
  if (trouble_.overruns > 0 || trouble_.cut_short > 0) {
    summary += "; " + std::to_string(trouble_.overruns) + " of the last " +
               std::to_string(trouble_.sweeps) + " sweeps outlasted the " +
               format_duration(config_.sweep_interval) + " interval (" +
               std::to_string(trouble_.cut_short) +
               " cut short, each resumed by the next): this fabric needs a longer "
               "sweep.interval, or more MADs in flight (mad.global_inflight)";
  }
  if (dropped != trouble_.dropped_seen) {
    summary += "; " + std::to_string(dropped - trouble_.dropped_seen) +
               " snapshots were not served: rendering and compressing one took longer than the "
               "sweeps (a leaner export: selection, fewer series)";
  }
  log_warn(summary);
  trouble_ = SweepTrouble{now, 0, 0, 0, dropped};
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
    DiscoveryPacer::Due due = pacer_.next();
    {
      std::unique_lock lock(stop_mu_);
      const std::uint64_t seen = pacer_.requests();
      // Wake up for a new request too: it may be due sooner.
      stop_cv_.wait_until(lock, due.at,
                          [&] { return stopping_.load() || pacer_.requests() != seen; });
      if (stopping_) return;
    }
    due = pacer_.next();
    const auto now = std::chrono::steady_clock::now();
    if (due.at > now) continue;
    pacer_.started(due.reason, now);
    {
      std::lock_guard lock(metrics_mu_);
      metrics_.on_discovery_started(due.reason);
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
  drop_forgotten();
  auto f = fabric();
  SweepResult r = sweeper_.sweep(*f, sweep_options(*f));
  if (health_) {
    health_->after_sweep(r.mads_sent, r.mads_ok);
    stale_worker_state_.reset();
    std::lock_guard lock(metrics_mu_);
    metrics_.on_worker(health_->up(), health_->restarts());
  }
  next_sweep_ += config_.sweep_interval;
  const auto now = std::chrono::steady_clock::now();
  const bool overrun = next_sweep_ < now;
  publish(f, std::move(r), overrun);
  // Keep a fixed cadence; after an overrun start again right away rather
  // than piling up missed ticks.
  if (overrun) next_sweep_ = now;
  arm_timer(next_sweep_);
}

bool Exporter::transport_ready() {
  if (!health_->up()) return false;
  if (health_->generation() == fabric_generation_) return true;
  request_discovery(DiscoveryReason::kWorkerRestart);
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
  publisher_.submit(assemble(previous->fabric, *last_sweep_, std::move(own), previous.get()));
}

void Exporter::start() {
  stopping_ = false;
  // First discovery happens right away on the discovery thread.
  discovery_thread_ = std::thread([this] {
    pacer_.started(DiscoveryReason::kStartup, std::chrono::steady_clock::now());
    {
      std::lock_guard lock(metrics_mu_);
      metrics_.on_discovery_started(DiscoveryReason::kStartup);
    }
    if (!discover_now()) log_warn("initial discovery failed; retrying in the background");
    discovery_loop();
  });
  publisher_.start();
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
  publisher_.stop();  // after the sweeps: what they submitted is published
}

}  // namespace ibfx
