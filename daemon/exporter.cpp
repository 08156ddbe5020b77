#include "daemon/exporter.h"

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <future>
#include <map>
#include <utility>

#include "base/log.h"
#include "base/thread_name.h"
#include "base/utc_time.h"

namespace ibfx {

namespace {
// The render and its deflate threads yield to the sweep thread and the
// MAD worker: on 2 cores, a render at the same weight stretched the sweeps
// of a 1 s interval (docs/benchmarks.md).
constexpr int kPublisherNice = 10;
}  // namespace

Exporter::Exporter(Config config, NodeNameMap names, std::unique_ptr<MadTransport> transport,
                   DiscoverFn discover, AnalysisConfig analysis)
    : config_(std::move(config)),
      names_(std::move(names)),
      sweep_(std::move(transport), config_),
      // Start-up: an unreadable token or host map file, a bad host_regex is
      // a ConfigError here, before anything runs.
      pipeline_(config_, std::move(analysis)),
      discovery_(std::move(discover), config_.discovery, discovery_events()),
      history_(config_.history),
      // Rendering is the publisher's step: it renders each scrape group once
      // and compresses it once (RenderedExposition); every scrape, of any
      // selection of groups or nodes, serves that and never renders. What
      // did not change since the snapshot before is not deflated again (the
      // publisher's deflate cache). The history is its publish stage: it
      // records each page's model before the page is rendered from it.
      publisher_(
          store_, SnapshotPublisher::render_exposition_for(config_.telemetry_path, {&history_}),
          [this](const Publication& pub, const PublisherStats& stats) {
            on_published(*pub.snapshot, stats);
          },
          kPublisherNice) {}

Exporter::~Exporter() { stop(); }

DiscoveryEvents Exporter::discovery_events() {
  // Discovery thread (or discover_now()'s caller).
  DiscoveryEvents events;
  events.started = [this](DiscoveryReason reason) {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_discovery_started(reason);
  };
  events.failed = [this] {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_discovery(nullptr, 0, false);
  };
  events.merged = [this](const Fabric& found, const MergeOutcome& merged, bool partial) {
    note_local_port_state(found.local_port_state);
    std::lock_guard lock(metrics_mu_);
    metrics_.on_discovery(&found, found.discovery_seconds, true);
    metrics_.on_merge(found, merged, partial);
  };
  events.discovered = [this](const std::string& summary) {
    if (!ready_.load()) status(summary + "; first sweep running");
  };
  return events;
}

void Exporter::note_local_port_state(std::uint8_t state) {
  // Discovery thread. Once per change to or from Active: the line that
  // explains a fabric of which nothing answers.
  if (state == 0 || state == local_port_state_) return;
  const std::uint8_t before = std::exchange(local_port_state_, state);
  if (state != 4 && (before == 4 || before == 0)) {
    log_warn("the local port is " + std::string(port_state_name(state)) + " (PortInfo:PortState " +
             std::to_string(state) +
             "), not Active: no PMA MAD passes until the subnet manager brings it up, so nodes "
             "will not answer");
  } else if (state == 4 && before != 0) {
    log_info("the local port is Active again (it was " + std::string(port_state_name(before)) +
             ")");
  }
}

SweepResult Exporter::sweep(const Fabric& f) {
  return sweep_.sweep(f, health_ ? health_->local_port() : LocalPort{}, names_);
}

void Exporter::drop_forgotten() {
  // Each stage lets go of what it keeps of a node discovery forgot: should
  // it come back, its series start again rather than resume from totals
  // hours old.
  for (const ForgottenNode& node : discovery_.take_forgotten()) {
    sweep_.forget(node.guid, node.ports);
    pipeline_.forget(node.guid, node.ports);
  }
}

bool Exporter::sweep_now() {
  drop_forgotten();
  auto f = discovery_.fabric();
  if (!f) return false;
  SweepResult r = sweep(*f);
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
  const std::size_t not_answering = count_not_answering(sweep.nodes);
  bool went_silent = false;
  for (std::size_t n = 0; n < sweep.nodes.size(); ++n) {
    const NodeSweep& ns = sweep.nodes[n];
    went_silent = went_silent || ns.went_silent;
    // A kept node that answers at its last LID, confirmed by NodeInfo, is
    // evidently still there, whatever the discoveries say.
    if (f && !f->nodes[n].present && ns.answered && ns.lid_confirmed) {
      discovery_.note_answered(f->nodes[n].guid);
    }
  }
  // A changed topology is looked at again soon (FabricDiscovery::note_sweep
  // says what counts as one).
  discovery_.note_sweep(sweep.lid_mismatches, sweep_.accumulator().stats().link_downed_deltas,
                        went_silent);
  std::string own;
  double finished = 0;
  {
    std::lock_guard lock(metrics_mu_);
    finished = metrics_.on_sweep(sweep, not_answering, overrun);
    metrics_.update_totals(sweep_.engine_stats(), sweep_.accumulator().stats());
    metrics_.on_routes(sweep_.route_stats());
    if (pipeline_.receipts().on()) metrics_.on_receipts(pipeline_.receipts().stats());
    if (http_stats_) {
      const auto [evicted, refused] = http_stats_();
      metrics_.on_http(evicted, refused);
    }
    const PublisherStats published = publisher_.stats();
    metrics_.on_publisher(published.published, published.dropped, published.last_render_seconds,
                          published.last_reused_bytes, published.last_deflated_bytes);
    own = metrics_.serialize();
  }
  sweep_.log_sweep(sweep, not_answering, overrun, publisher_.stats().dropped);
  // The snapshot's sweep time is the one /metrics reports (issue #27:
  // /status.json and /metrics agree on it).
  auto snap = assemble(f, sweep, std::move(own), finished);
  // Rendered and compressed on the publisher's thread, while the next sweep
  // runs: a scrape only reads what it published.
  publisher_.submit(std::move(snap));
  sweep_.after_sweep_took(std::chrono::steady_clock::now() - started);
  // What the snapshot shows, for republish_stale() while the worker is down.
  last_sweep_ = std::move(sweep);
}

std::shared_ptr<const Snapshot> Exporter::assemble(std::shared_ptr<const Fabric> f,
                                                   const SweepResult& sweep,
                                                   std::string own_metrics,
                                                   double sweep_timestamp_seconds) {
  SweepFrame frame;
  SnapshotInputs& in = frame.snapshot;
  in.sweep_timestamp_seconds = sweep_timestamp_seconds;
  in.sweep = &sweep;
  const CounterAccumulator& accumulator = sweep_.accumulator();
  in.accumulator = &accumulator;
  in.exporting = config_.exporting;
  in.exporter_metrics_text = std::move(own_metrics);
  if (f) {
    in.node_names = node_display_names(*f, names_);
    in.device_ticks = sweep_.device_ticks(*f);
    in.lanes = lane_totals(*f, accumulator.lanes());
  }
  in.fabric = std::move(f);
  // The intervals end when the sweep starts (SweepAnalyzer::analyze).
  frame.now = unix_seconds(sweep.started_at);
  frame.tables = sweep_.routes();
  pipeline_.run(frame);
  return build_snapshot(std::move(in));
}

std::shared_ptr<const Snapshot> Exporter::republished(const Snapshot& previous,
                                                      std::string own_metrics) {
  // The same sweep again, with the daemon's own metrics updated: its
  // analysis and timestamp stay (their age says how stale the counters are).
  auto snap = std::make_shared<Snapshot>(previous);
  snap->exporter_metrics_text = std::move(own_metrics);
  return snap;
}

void Exporter::on_published(const Snapshot& snap, const PublisherStats& stats) {
  // Publisher thread. node_status holds what the sweep said of each node.
  // (bench/daemon_cadence.h reads this line.)
  log_debug("published snapshot " + std::to_string(stats.last_sequence) +
            ": rendered and compressed in " + std::to_string(stats.last_render_seconds) + " s, " +
            std::to_string(stats.dropped) + " dropped so far");
  const std::size_t not_answering = count_not_answering(snap.node_status);
  const std::string summary = std::to_string(snap.sweep_totals.ports_read) + " ports in " +
                              std::to_string(snap.sweep_totals.duration_seconds).substr(0, 5) +
                              " s, " + std::to_string(not_answering) + " nodes not answering";
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
                                          const AnalysisConfig& analysis) {
  // What a reload cannot apply keeps its running value (and is said to need
  // a restart); everything else is applied below.
  std::vector<std::string> needs_restart = keep_restart_only(config_, config);
  // Jobs: everything that can fail (token file, host map file, host_regex)
  // is read here, before anything is applied: a bad file keeps the running
  // settings, all of them. The token file is read again on every SIGHUP.
  std::vector<StageReload> stages = pipeline_.prepare_reload({config, analysis});
  auto apply = [this, config = std::move(config), names = std::move(names), &stages]() mutable {
    const bool rearm = config.sweep_interval != config_.sweep_interval;
    config_ = std::move(config);
    names_ = std::move(names);
    sweep_.reload(config_);
    discovery_.reload(config_.discovery);
    for (const StageReload& stage : stages) {
      if (stage.apply) stage.apply(sweep_thread_.joinable());
    }
    if (rearm && sweep_thread_.joinable()) {
      next_sweep_ = std::chrono::steady_clock::now() + config_.sweep_interval;
      arm_timer(next_sweep_);
    }
    log_info("configuration reloaded");
  };
  if (sweep_thread_.joinable() && !stopping_) {
    // Run between two sweeps on the sweep thread, which owns this state.
    std::promise<void> done;
    auto fut = done.get_future();
    boost::asio::post(sweep_io_, [&apply, &done] {
      apply();
      done.set_value();
    });
    fut.wait();
  } else {
    apply();
  }
  // Off the sweep thread: a retired job source's last poll may take up to
  // jobs.timeout.
  for (const StageReload& stage : stages) {
    if (stage.finish) stage.finish();
  }
  return needs_restart;
}

void Exporter::arm_timer(std::chrono::steady_clock::time_point when) {
  timer_.expires_at(when);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopping_) on_timer();
  });
}

void Exporter::on_timer() {
  const auto started = std::chrono::steady_clock::now();
  if (!discovery_.fabric()) {
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
  auto f = discovery_.fabric();
  SweepResult r = sweep(*f);
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
  if (health_->generation() == discovery_.generation()) return true;
  discovery_.request(DiscoveryReason::kWorkerRestart);
  return false;
}

void Exporter::republish_stale() {
  // The same data as the last snapshot (the accumulator has not moved), with
  // the worker's state updated: last_sweep_timestamp stays, so its age grows
  // and says how stale the counters are.
  const auto published = store_.current();
  if (!published || !last_sweep_) return;
  const std::pair<bool, std::uint64_t> worker{health_->up(), health_->restarts()};
  if (stale_worker_state_ == worker) return;
  stale_worker_state_ = worker;
  std::string own;
  {
    std::lock_guard lock(metrics_mu_);
    metrics_.on_worker(worker.first, worker.second);
    own = metrics_.serialize();
  }
  publisher_.submit(republished(*published->snapshot, std::move(own)));
}

void Exporter::start() {
  stopping_ = false;
  // The stages' own threads: the job source's, the route model's builds
  // (a 98k-port model takes ~0.3 s, not for the sweep thread of a 1 s
  // interval; sweep_now() callers build inline).
  pipeline_.start();
  // The first discovery happens right away on the discovery thread.
  discovery_.start();
  publisher_.start();
  next_sweep_ = std::chrono::steady_clock::now();
  sweep_thread_ = std::thread([this] {
    set_thread_name("ibfx-sweep");
    arm_timer(next_sweep_);
    sweep_io_.run();
  });
}

void Exporter::stop() {
  if (stopping_.exchange(true)) return;
  discovery_.request_stop();
  boost::asio::post(sweep_io_, [this] { timer_.cancel(); });
  sweep_io_.stop();
  if (sweep_thread_.joinable()) sweep_thread_.join();
  discovery_.stop();
  publisher_.stop();  // after the sweeps: what they submitted is published
  history_.stop();    // after the publisher: the last sweep's frame is in it
  // After the sweeps: the events, the running jobs' receipts as the last
  // one left them are saved; the job source stops.
  pipeline_.stop();
}

}  // namespace ibfx
