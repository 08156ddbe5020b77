// One PMA sweep of the whole fabric: ClassPortInfo once per node (cached),
// then PortCountersExtended and/or PortCounters for every port, all through
// the pipelined MadEngine; readings go into the CounterAccumulator. One bad
// node costs its own ports, never the sweep.
#pragma once

#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collectors/counter_accumulator.h"
#include "collectors/fabric.h"
#include "collectors/mad_engine.h"

namespace ibfx {

struct SweepOptions {
  bool include_hcas = true;
  bool include_switch_port0 = false;  // reserved: switch port 0 has no link counters
  ClearPolicy clear;
  std::chrono::milliseconds budget{std::chrono::seconds(60)};  // hard stop for one sweep
  // Sharding: sweep only nodes with hash(guid) % shard_count == shard_index.
  std::uint32_t shard_count = 1;
  std::uint32_t shard_index = 0;
};

struct NodeSweep {
  bool swept = false;     // in this daemon's share and addressable
  bool answered = false;  // every port read succeeded
  std::uint32_t failed_mads = 0;
};

struct SweepResult {
  std::vector<NodeSweep> nodes;                 // parallel to Fabric::nodes
  std::vector<std::vector<bool>> port_read;     // [node][port index]: read this sweep
  std::chrono::system_clock::time_point started_at{};
  double duration_seconds = 0;
  bool completed = true;  // false when the budget cut it short
  std::uint64_t mads_sent = 0;
  std::uint64_t mads_ok = 0;
  std::uint64_t mads_timeout = 0;
  std::uint64_t mads_error = 0;
  std::uint64_t clears_sent = 0;
  std::size_t ports_read = 0;
};

// Stable hash of a node GUID for sharding (FNV-1a over the 8 bytes), so all
// daemons agree on the split independent of discovery order.
std::uint64_t shard_hash(std::uint64_t guid);

class Sweeper {
 public:
  Sweeper(MadEngine& engine, CounterAccumulator& accumulator);

  SweepResult sweep(const Fabric& fabric, const SweepOptions& options);

  // Forget cached PMA capabilities (e.g. after a node was replaced).
  void clear_capabilities() { capabilities_.clear(); }
  // Cached PMA capabilities of a node (null until its ClassPortInfo answered).
  const PmaCapabilities* capabilities(std::uint64_t guid) const {
    auto it = capabilities_.find(guid);
    return it == capabilities_.end() ? nullptr : &it->second;
  }
  std::size_t cached_capabilities() const { return capabilities_.size(); }

 private:
  struct PortWork {
    std::uint32_t node;
    std::uint32_t port_index;
    std::uint8_t outstanding = 0;
    bool failed = false;
    CounterReading reading;
  };
  void query_ports(const Fabric& fabric, std::uint32_t node_index, const PmaCapabilities& caps,
                   const SweepOptions& options, SweepResult& result);
  void port_done(const Fabric& fabric, PortWork& work, const SweepOptions& options,
                 SweepResult& result);

  MadEngine& engine_;
  CounterAccumulator& accumulator_;
  std::unordered_map<std::uint64_t, PmaCapabilities> capabilities_;
  std::vector<PortWork> work_;
};

}  // namespace ibfx
