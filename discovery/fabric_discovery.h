// The discover stage of the pipeline: runs discoveries (on its own thread,
// or on the caller's with discover_now()), merges each into the known
// fabric and paces them, and hands the current fabric to the sweep.
//
// Each discovery is merged into the known fabric, never replaces it
// (FabricMerger: a node an SMP loss hid is kept and still swept), and
// discoveries are paced (DiscoveryPacer: the schedule, partial retries,
// spaced requests from the sweep and the MAD worker). What a discovery
// found is told through DiscoveryEvents (the exporter's metrics and status);
// the nodes it forgot are taken by the sweep side (take_forgotten()), which
// holds their totals.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "discovery/discovery.h"
#include "discovery/discovery_pacer.h"
#include "discovery/fabric_merger.h"
#include "mad/mad_transport.h"

namespace ibfx {

using DiscoverFn = std::function<DiscoveryResult()>;

// What a discovery did, for whoever keeps metrics and status. Called on
// the thread that ran it (the discovery thread, or discover_now()'s caller).
struct DiscoveryEvents {
  std::function<void(DiscoveryReason)> started;  // the discovery thread starts one
  std::function<void()> failed;                  // found nothing (logged)
  // Found `found`, merged into the known fabric as `merged`; `partial`:
  // SMPs were lost or known nodes not found.
  std::function<void(const Fabric& found, const MergeOutcome& merged, bool partial)> merged;
  // A one-line summary ("discovered 12 nodes, 40 ports in 0.1 s").
  std::function<void(const std::string& summary)> discovered;
};

class FabricDiscovery {
 public:
  // `pacing`: the pacer's spacings and back-offs (the defaults but in
  // tests); its interval is `config.interval`.
  FabricDiscovery(DiscoverFn discover, const DiscoveryConfig& config, DiscoveryEvents events = {},
                  DiscoveryPacing pacing = {});
  ~FabricDiscovery();
  FabricDiscovery(const FabricDiscovery&) = delete;
  FabricDiscovery& operator=(const FabricDiscovery&) = delete;

  // The MAD worker's health (the daemon), so that a fabric is known to be
  // discovered through the current worker (generation()). Call before
  // start().
  void set_transport_health(TransportHealth* health) { health_ = health; }

  // Runs one discovery now (blocking). Returns false and logs on failure.
  bool discover_now();
  // Asks for a rediscovery (any thread); the pacer decides when.
  void request(DiscoveryReason reason);

  // The known fabric after the latest discovery; null before the first.
  std::shared_ptr<const Fabric> fabric() const;
  // The worker generation the current fabric was discovered through (0
  // without transport health): a sweep through a newer worker waits for
  // the fabric to be discovered again.
  std::uint64_t generation() const { return generation_.load(); }

  // What one sweep saw (sweep thread). A LID answering as another node, a
  // link that went down (LinkDownedCounter totals moved), or a node that
  // answered and now answers nothing, means the topology changed: look
  // again soon. A sweep cut short, or a node that stays silent, is no such
  // sign: under MAD loss it would make discovery a storm of SMPs.
  void note_sweep(std::uint64_t lid_mismatches, std::uint64_t link_downed_total, bool went_silent);
  // A kept node answered at its last LID, confirmed by NodeInfo.
  void note_answered(std::uint64_t guid) { merger_.note_answered(guid); }
  // The nodes forgotten since the last call (FabricMerger::take_forgotten).
  std::vector<ForgottenNode> take_forgotten() { return merger_.take_forgotten(); }

  // New settings (SIGHUP), as the sweep stage takes them: the schedule and
  // the forget policy.
  void reload(const DiscoveryConfig& config);

  // Background mode: the first discovery right away, then as paced.
  void start();
  // Wakes the discovery thread to end (after a discovery under way); stop()
  // also waits for it. Both idempotent.
  void request_stop();
  void stop();

 private:
  void loop();
  void wake();

  DiscoverFn discover_;
  DiscoveryEvents events_;
  TransportHealth* health_ = nullptr;
  FabricMerger merger_;
  DiscoveryPacer pacer_;

  mutable std::mutex fabric_mu_;
  std::shared_ptr<const Fabric> fabric_;  // the merger's latest, as handed out
  std::atomic<std::uint64_t> generation_{0};
  int unaddressed_discoveries_ = 0;     // discovery thread only
  std::uint64_t link_downed_seen_ = 0;  // sweep thread only

  std::atomic<bool> stopping_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::thread thread_;
};

}  // namespace ibfx
