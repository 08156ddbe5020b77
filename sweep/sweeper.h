// One PMA sweep of the whole fabric: ClassPortInfo once per node (cached),
// then PortCountersExtended and/or PortCounters for every port, all through
// the pipelined MadEngine; readings go into the CounterAccumulator. One bad
// node costs its own ports, never the sweep.
//
// A LID is only an address the SM hands out: after an SM restart it may
// belong to another port, which then answers our PMA queries with its own
// counters. So, where the transport can send SMPs, the readings taken at a
// LID are held until one NodeInfo SMP to that LID, sent after they arrived,
// names the node (and, for an HCA, the port) they were meant for; otherwise
// they are dropped and the node reported as not answering (which makes the
// exporter rediscover). One SMP per switch and per HCA port, per sweep. An
// SMP that gets no answer is no evidence of a move: the readings are kept.
//
// A sweep the budget cuts short marks nothing down: the nodes it did not
// finish keep their last readings and state, and the next sweep starts with
// them (round robin), so every node is read within a bounded number of
// sweeps however slow the fabric.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"
#include "fabric/sweep_result.h"
#include "mad/mad_engine.h"
#include "sweep/sm_guard.h"

namespace ibfx {

struct SweepOptions {
  bool include_hcas = true;
  bool include_switch_port0 = false;  // reserved: switch port 0 has no link counters
  ClearPolicy clear;
  std::chrono::milliseconds budget{std::chrono::seconds(60)};  // hard stop for one sweep
  // Sharding: sweep only nodes with hash(guid) % shard_count == shard_index.
  std::uint32_t shard_count = 1;
  std::uint32_t shard_index = 0;
  // Nodes that get no optional MAD (the PortSamplesControl probe, the
  // opt-in groups' attributes, counter clears): the SM's and this management
  // node's own (docs/safety.md).
  SmGuard guard;
  // Opt-in counter groups (config counters.error_details, ...). Each of
  // their attributes costs one probe per node, remembered; only a node that
  // answered it is read, one more Get per port and attribute. All off: not
  // one MAD more than without them.
  CounterGroups groups;
  // Called once the sweep's own requests are queued, just before the
  // engine runs: what else rides this sweep's run (the route reader's
  // SMPs) queues behind them, so the sweep's node order (the round robin
  // after a cut sweep) stays the sweep's.
  std::function<void()> before_run;
};

// Stable hash of a node GUID for sharding (FNV-1a over the 8 bytes), so all
// daemons agree on the split independent of discovery order.
std::uint64_t shard_hash(std::uint64_t guid);

class Sweeper {
 public:
  Sweeper(MadEngine& engine, CounterAccumulator& accumulator);

  SweepResult sweep(const Fabric& fabric, const SweepOptions& options);

  // Forget all that is kept about a node (it left the known fabric).
  void forget(std::uint64_t guid) {
    capabilities_.erase(guid);
    last_state_.erase(guid);
    port_resume_.erase(guid);
  }
  // Cached PMA capabilities of a node (null until its ClassPortInfo answered).
  // Kept per node GUID across rediscoveries: a node is probed again only
  // when it is new, reports another VendorID/DeviceID (replaced), or its
  // LID was found answering as another node.
  const PmaCapabilities* capabilities(std::uint64_t guid) const {
    auto it = capabilities_.find(guid);
    return it == capabilities_.end() ? nullptr : &it->second.caps;
  }
  // What the node's PMA said about an opt-in group's attribute: probed on
  // the same terms as PortSamplesControl (once per node, remembered with
  // the capabilities, asked again only after rediscovery marks the node new
  // or changed).
  enum class Support : std::uint8_t { kUnknown, kSupported, kUnsupported };
  Support support(std::uint64_t guid, OptionalAttr attr) const {
    auto it = capabilities_.find(guid);
    return it == capabilities_.end() ? Support::kUnknown
                                     : it->second.optional[static_cast<std::size_t>(attr)];
  }
  std::size_t cached_capabilities() const { return capabilities_.size(); }

 private:
  struct Probed {
    PmaCapabilities caps;
    std::uint32_t vendor_id = 0;  // NodeInfo identity the probe was made for
    std::uint32_t device_id = 0;
    bool tick_probed = false;  // PortSamplesControl asked (answered or not)
    std::array<Support, kOptionalAttrCount> optional{};  // opt-in group attributes
    std::array<bool, kOptionalAttrCount> probing{};      // probe in flight this sweep
  };
  // Whether the node still needs an optional probe under `options`.
  static bool needs_probe(const Probed& p, const SweepOptions& options);
  // What the last sweep that reached a node said about it.
  struct LastState {
    bool answered = false;
    bool ever_reached = false;
    std::chrono::steady_clock::time_point reached_at{};  // or first due, if never reached
    // Last sweep that read any of its ports: the round robin's order, so
    // that a big node left half read does not hog the next sweep too.
    std::chrono::steady_clock::time_point touched_at{};
  };
  void probe_node(const Fabric& fabric, std::uint32_t n);
  // The optional probes the node still needs (PortSamplesControl, the
  // enabled groups' attributes), unless the guard protects the node.
  void probe_tick(const Fabric& fabric, std::uint32_t n);
  // probe_tick's steps. The opt-in attributes still to ask about (none of
  // them, all unsupported, for a PMA of PortSamples only).
  struct WantedProbes {
    std::array<bool, kOptionalAttrCount> attrs{};
    bool any = false;
  };
  WantedProbes wanted_probes(Probed& probed) const;
  // The guard protects the node: nothing is asked, counted once as withheld.
  void withhold_probes(Probed& probed, const WantedProbes& wanted);
  void probe_optional_attrs(const FabricNode& self, Probed& probed, const WantedProbes& wanted);
  void probe_sample_tick(const FabricNode& self);
  void finish_nodes(const Fabric& fabric, const std::vector<std::uint32_t>& order,
                    std::chrono::steady_clock::time_point now, SweepResult& result);

  static constexpr std::uint32_t kNoCheck = ~std::uint32_t{0};
  struct PortWork {
    std::uint32_t node = 0;
    std::uint32_t port_index = 0;
    std::uint8_t outstanding = 0;
    bool failed = false;
    std::uint32_t check = kNoCheck;  // index into checks_; kNoCheck: apply right away
    CounterReading reading;
    // Per-lane attributes of the opt-in groups; allocated only for a port
    // that reads one, so the default sweep's work list stays small.
    std::unique_ptr<LaneReading> lanes;
  };
  // The readings taken at one LID, waiting for that LID's owner to be
  // confirmed.
  struct LidCheck {
    std::uint32_t node;
    std::uint16_t lid;
    std::uint8_t port;                // HCA: the port the LID must belong to; switch: 0 (any)
    std::uint32_t outstanding = 0;    // port reads still in flight
    std::vector<std::uint32_t> held;  // indices into work_ of complete readings
    bool probe = false;               // send the tick probe once the LID is confirmed
  };
  // Reads the node's ports. With `probe` and LID checks on, the tick probe
  // is attached to the check of the node's LID (sent once that confirms the
  // node) and true returned; false: no checks, the caller probes now.
  bool query_ports(const Fabric& fabric, std::uint32_t node_index, const PmaCapabilities& caps,
                   bool probe = false);
  void port_done(const Fabric& fabric, std::size_t w, const SweepOptions& options,
                 SweepResult& result);
  void verify_lid(const Fabric& fabric, std::uint32_t c, const SweepOptions& options,
                  SweepResult& result);
  void apply_reading(const Fabric& fabric, PortWork& work, const SweepOptions& options,
                     SweepResult& result);

  MadEngine& engine_;
  CounterAccumulator& accumulator_;
  std::unordered_map<std::uint64_t, Probed> capabilities_;
  std::unordered_map<std::uint64_t, LastState> last_state_;
  // Round robin after a sweep the budget cut short: the next one asks the
  // nodes with the oldest readings first, and a node left half read from
  // the first port it did not read.
  bool last_cut_ = false;
  // How long the last cut-short sweep took past its engine deadline
  // (cancelling the rest, settling node state): held back from the next
  // deadline, so a cut sweep ends within its budget.
  std::chrono::steady_clock::duration cut_tail_{};
  std::unordered_map<std::uint64_t, std::uint32_t> port_resume_;
  // The sweep in progress, for the per-MAD callbacks: capturing only
  // {this, index} keeps each std::function within its small-object buffer,
  // so queueing a MAD does not allocate.
  struct Context {
    const Fabric* fabric = nullptr;
    const SweepOptions* options = nullptr;
    SweepResult* result = nullptr;
  };
  void on_port_reply(std::uint32_t w, const MadCompletion& c, bool extended);
  void on_optional_reply(std::uint32_t w, OptionalAttr attr, const MadCompletion& c);
  Context ctx_;
  std::vector<PortWork> work_;
  std::vector<LidCheck> checks_;
};

}  // namespace ibfx
