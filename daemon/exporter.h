// Wires the pipeline: discover -> sweep -> accumulate -> analyse ->
// snapshot -> render. Discovery runs on its own thread (FabricDiscovery),
// refreshed periodically and when a sweep sees the topology change; sweeps
// run on the sweep thread (ibfx-sweep), re-armed by an Asio timer; each
// sweep's result goes down the stages between it and its snapshot once
// (Pipeline, pipeline/pipeline.h), and the snapshot to the
// SnapshotPublisher, whose thread renders and compresses it while the next
// sweep runs; the HTTP side only reads the published snapshot.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "config/node_name_map.h"
#include "daemon/exporter_metrics.h"
#include "discovery/fabric_discovery.h"
#include "mad/mad_transport.h"
#include "pipeline/history_recorder.h"
#include "pipeline/pipeline.h"
#include "pipeline/publication.h"
#include "pipeline/snapshot_publisher.h"
#include "snapshot/snapshot.h"
#include "sweep/sweep_stage.h"

namespace ibfx {
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
  bool discover_now() { return discovery_.discover_now(); }
  // Runs one sweep on the current fabric and publishes a snapshot (rendered
  // when it returns). Returns false when there is no fabric yet.
  bool sweep_now();

  // Applies a new configuration on the sweep thread between sweeps: MAD
  // limits, sweep interval, counter options, names, analysis. Accumulated
  // counters are kept. The listen address and the CA are fixed at start-up
  // (returned as warnings). Returns the list of settings that need a restart.
  std::vector<std::string> reload(Config config, NodeNameMap names, const AnalysisConfig& analysis);

  // The MAD worker's health, when the transport is one (the daemon; not
  // tests with fakes). Sweeps then wait while the worker is down or was
  // replaced and the fabric not yet rediscovered through the new one; the
  // last good snapshot stays served meanwhile. Call before start().
  void set_transport_health(TransportHealth* health) {
    health_ = health;
    discovery_.set_transport_health(health);
  }
  // Told of discoveries and of every published sweep. Call before start().
  void set_status_callback(StatusFn status) { status_ = std::move(status); }

  // Where the daemon's HTTP connection counts come from (evicted, refused),
  // exported with its health after each sweep. Call before start().
  using HttpStatsFn = std::function<std::pair<std::uint64_t, std::uint64_t>()>;
  void set_http_stats(HttpStatsFn stats) { http_stats_ = std::move(stats); }

  // Keeps the congestion events in `directory` (Config::state_directory;
  // empty: nowhere): restores what a previous run saved there and saves
  // every change. The daemon calls it before start(); --once and tests
  // that do not ask keep no state.
  void keep_events_in(const std::string& directory) {
    pipeline_.keep_in(directory);
    if (!directory.empty()) history_.keep_in(directory);
  }
  // The job receipts (issue #44) for /jobs: the finished ones (thread-safe,
  // never null), and a running job's would-be receipt (ReceiptsStage::peek,
  // any thread).
  std::shared_ptr<const ReceiptStore> receipt_store() const { return pipeline_.receipts().store(); }
  bool peek_receipt(std::uint64_t job_id, double now, JobReceipt& out) const {
    return pipeline_.receipts().peek(job_id, now, out);
  }
  bool receipts_on() const { return pipeline_.receipts().on(); }
  // The events keep_events_in() restored (null without a state directory):
  // what /events shows until the first sweep is published. Fixed once
  // start() has run.
  std::shared_ptr<const EventList> restored_events() const { return pipeline_.events().restored(); }
  std::shared_ptr<const LinkEventList> restored_link_events() const {
    return pipeline_.events().restored_links();
  }

  // Background mode: the discovery thread (FabricDiscovery), the sweep
  // thread and the stages' own (jobs, publisher).
  void start();
  void stop();

  // The latest publication (null before the first sweep) and its snapshot.
  std::shared_ptr<const Publication> publication() const { return store_.current(); }
  std::shared_ptr<const Snapshot> snapshot() const {
    auto p = store_.current();
    return p ? p->snapshot : nullptr;
  }
  bool ready() const { return ready_.load(); }
  PublisherStats publisher_stats() const { return publisher_.stats(); }
  const Config& config() const { return config_; }

 private:
  DiscoveryEvents discovery_events();
  // Logs the local port leaving and reaching Active (discovery thread).
  void note_local_port_state(std::uint8_t state);
  void arm_timer(std::chrono::steady_clock::time_point when);
  void on_timer();
  // `f` is the fabric the sweep ran on: its per-node results are
  // parallel to that fabric's node list, which a discovery finishing during
  // the sweep replaces (and may reorder).
  void publish(const std::shared_ptr<const Fabric>& f, SweepResult sweep, bool overrun);
  // The one place a snapshot of a new sweep of `f` is assembled, complete:
  // analysed first, then built with everything it shows.
  std::shared_ptr<const Snapshot> assemble(std::shared_ptr<const Fabric> f,
                                           const SweepResult& sweep, std::string own_metrics,
                                           double sweep_timestamp_seconds = 0);
  // `previous` again with the daemon's own metrics (`own_metrics`) updated.
  static std::shared_ptr<const Snapshot> republished(const Snapshot& previous,
                                                     std::string own_metrics);
  // Publisher thread, after each publication: readiness and status.
  void on_published(const Snapshot& snap, const PublisherStats& stats);
  void status(const std::string& text);
  // One sweep of `f` by the sweep stage, from the transport's local port.
  SweepResult sweep(const Fabric& f);
  bool transport_ready();
  void republish_stale();
  void drop_forgotten();

  Config config_;
  NodeNameMap names_;
  // Sweep thread: the engine, the sweeper, the accumulator, the SM guard.
  SweepStage sweep_;
  ExporterMetrics metrics_;
  // Sweep thread: the stages between a sweep and its snapshot (routes,
  // analysis, senders, jobs, events, nodes, receipts), each keeping what
  // one sweep hands to the next.
  Pipeline pipeline_;
  std::uint8_t local_port_state_ = 0;  // discovery thread: the last one logged
  PublicationStore store_;
  std::atomic<bool> ready_{false};

  TransportHealth* health_ = nullptr;
  HttpStatsFn http_stats_;
  std::optional<SweepResult> last_sweep_;  // sweep thread: what the snapshot shows
  std::optional<std::pair<bool, std::uint64_t>> stale_worker_state_;  // last republished

  std::mutex metrics_mu_;  // discovery and sweep threads both update metrics
  StatusFn status_;

  // The discover stage: its thread, the known fabric, pacing. Its events
  // update metrics_ (under metrics_mu_) and the status.
  FabricDiscovery discovery_;
  // The status page's history: recorded by the publisher's thread, kept
  // with the events in the state directory (issue #35).
  HistoryRecorder history_;
  std::atomic<bool> stopping_{false};
  boost::asio::io_context sweep_io_;
  boost::asio::steady_timer timer_{sweep_io_};
  std::chrono::steady_clock::time_point next_sweep_{};
  std::thread sweep_thread_;
  // Last member: its thread calls on_published(), so it stops first.
  SnapshotPublisher publisher_;
};

}  // namespace ibfx
