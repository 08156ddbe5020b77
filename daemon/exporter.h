// Ties the pipeline together: discover -> sweep -> accumulate -> analyse ->
// snapshot -> render. Discovery runs on its own thread and is refreshed
// periodically; sweeps run on the collector thread, re-armed by an Asio
// timer, and hand each built snapshot to the SnapshotPublisher, whose thread
// renders and compresses it while the next sweep runs; the HTTP side only
// reads the published snapshot.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collectors/counter_accumulator.h"
#include "collectors/discovery.h"
#include "collectors/discovery_pacer.h"
#include "collectors/fabric_merger.h"
#include "collectors/mad_engine.h"
#include "collectors/sweeper.h"
#include "config/config.h"
#include "daemon/exporter_metrics.h"
#include "daemon/snapshot.h"
#include "daemon/snapshot_publisher.h"

namespace ibfx {

using DiscoverFn = std::function<DiscoveryResult()>;
// A one-line state of the pipeline ("discovered ...", "last sweep: ..."):
// daemon/main.cpp hands it to systemd (STATUS=). Called from the discovery
// and publisher threads.
using StatusFn = std::function<void(const std::string&)>;

class Exporter {
 public:
  Exporter(Config config, NodeNameMap names, std::unique_ptr<MadTransport> transport,
           DiscoverFn discover, AnalysisConfig analysis = {});
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  // Runs one discovery now (blocking). Returns false and logs on failure.
  bool discover_now();
  // Runs one sweep on the current fabric and publishes a snapshot (rendered
  // when it returns). Returns false when there is no fabric yet.
  bool sweep_now();

  // Applies a new configuration on the sweep thread between sweeps: MAD
  // limits, sweep interval, counter options, names, analysis. Accumulated
  // counters are kept. The listen address and the CA are fixed at start-up
  // (returned as warnings). Returns the list of settings that need a restart.
  std::vector<std::string> reload(Config config, NodeNameMap names, AnalysisConfig analysis);

  // The MAD worker's health, when the transport is one (the daemon; not
  // tests with fakes). Sweeps then wait while the worker is down or was
  // replaced and the fabric not yet rediscovered through the new one; the
  // last good snapshot stays served meanwhile. Call before start().
  void set_transport_health(TransportHealth* health) { health_ = health; }
  // Told of discoveries and of every published sweep. Call before start().
  void set_status_callback(StatusFn status) { status_ = std::move(status); }

  // Where the daemon's HTTP connection counts come from (evicted, refused),
  // exported with its health after each sweep. Call before start().
  using HttpStatsFn = std::function<std::pair<std::uint64_t, std::uint64_t>()>;
  void set_http_stats(HttpStatsFn stats) { http_stats_ = std::move(stats); }

  // Background mode: discovery thread + collector thread.
  void start();
  void stop();

  std::shared_ptr<const Snapshot> snapshot() const { return store_.current(); }
  bool ready() const { return ready_.load(); }
  PublisherStats publisher_stats() const { return publisher_.stats(); }
  const Config& config() const { return config_; }

 private:
  void discovery_loop();
  void request_discovery(DiscoveryReason reason);
  void arm_timer(std::chrono::steady_clock::time_point when);
  void on_timer();
  // `f` is the fabric the sweep ran on: its per-node results are
  // parallel to that fabric's node list, which a discovery finishing during
  // the sweep replaces (and may reorder) under fabric_.
  void publish(const std::shared_ptr<const Fabric>& f, SweepResult sweep, bool overrun);
  // The one place a snapshot is assembled: from a new sweep of `f` (then
  // analysed), or with `previous`, the same data as that one again with the
  // daemon's own metrics (`own_metrics`) updated.
  std::shared_ptr<Snapshot> assemble(std::shared_ptr<const Fabric> f, const SweepResult& sweep,
                                     std::string own_metrics, const Snapshot* previous);
  // Publisher thread, after each publication: readiness and status.
  void on_published(const Snapshot& snap, const PublisherStats& stats);
  void status(const std::string& text);
  std::shared_ptr<const Fabric> fabric() const;
  void analyze_sweep(Snapshot& snap, const SweepResult& sweep);
  // For a sweep of `fabric` (sweep thread).
  SweepOptions sweep_options(const Fabric& fabric);
  // Which nodes of `fabric` get no optional MAD (docs/safety.md); logs
  // what changed since the last sweep. Sweep thread.
  SmGuard sm_guard(const Fabric& fabric);
  bool transport_ready();
  void republish_stale();
  void log_sweep(const SweepResult& sweep, std::size_t not_answering, bool overrun);
  void drop_forgotten();

  Config config_;
  NodeNameMap names_;
  std::unique_ptr<MadTransport> transport_;
  DiscoverFn discover_;
  MadEngine engine_;
  CounterAccumulator accumulator_;
  Sweeper sweeper_;
  ExporterMetrics metrics_;
  AnalysisConfig analysis_config_;
  SweepAnalyzer analyzer_;  // per-sweep analysis state (previous totals, topology, histograms)
  SnapshotStore store_;
  std::atomic<bool> ready_{false};
  std::uint64_t sweeps_ = 0;
  // Sweep thread: how long the last publish() took (snapshot, analysis).
  std::chrono::steady_clock::duration after_sweep_{};
  // Sweep trouble is logged at most once a minute, summed up since.
  struct SweepTrouble {
    std::chrono::steady_clock::time_point last_logged{};
    std::uint64_t sweeps = 0, overruns = 0, cut_short = 0;
    std::uint64_t dropped_seen = 0;  // publisher drops, as of the last line logged
  } trouble_;

  TransportHealth* health_ = nullptr;
  HttpStatsFn http_stats_;
  // Worker generation the current fabric was discovered through.
  std::atomic<std::uint64_t> fabric_generation_{0};
  int unaddressed_discoveries_ = 0;        // discovery thread only
  std::optional<SweepResult> last_sweep_;  // sweep thread: what the snapshot shows
  // Sweep thread: the protected nodes last logged, and one-time warnings.
  std::map<std::uint64_t, std::string> guarded_;
  bool guard_opted_out_logged_ = false;
  bool sm_lid_unknown_logged_ = false;
  std::optional<std::pair<bool, std::uint64_t>> stale_worker_state_;  // last republished

  mutable std::mutex fabric_mu_;
  std::shared_ptr<const Fabric> fabric_;
  std::mutex metrics_mu_;  // discovery and sweep threads both update metrics

  // Discovery merges into the known fabric (fabric_ is its latest state)
  // and is paced: schedule, partial retries, spaced requests.
  FabricMerger merger_;
  DiscoveryPacer pacer_;
  std::uint64_t link_downed_seen_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::thread discovery_thread_;
  boost::asio::io_context collector_io_;
  boost::asio::steady_timer timer_{collector_io_};
  std::chrono::steady_clock::time_point next_sweep_{};
  std::thread collector_thread_;
  StatusFn status_;
  // Last member: its thread calls on_published(), so it stops first.
  SnapshotPublisher publisher_;
};

}  // namespace ibfx
