// Turns raw, possibly narrow and saturating, device counters into monotonic
// 64-bit totals, the way OpenSM's PerfMgr does: keep the previous raw value
// and add deltas. A value that goes down was cleared by someone else: the new
// value is the delta, and the exported total never decreases.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "fabric/counter_step.h"
#include "fabric/counters.h"
#include "fabric/lane_accumulator.h"
#include "fabric/port_key.h"

namespace ibfx {

struct ClearPolicy {
  bool enabled = false;
  double threshold = 0.75;  // fraction of the field's range
};

struct AccumulatorStats {
  std::array<std::uint64_t, kCounterCount> saturations{};      // reached the field's maximum
  std::array<std::uint64_t, kCounterCount> external_clears{};  // decreased without our clear
  std::array<std::uint64_t, kCounterCount> clears{};           // cleared by us
  std::uint64_t link_downed_deltas = 0;  // sum of LinkDownedCounter increments seen
};

class CounterAccumulator {
 public:
  struct State {
    std::array<std::uint64_t, kCounterCount> last{};
    std::array<std::uint64_t, kCounterCount> total{};
    std::array<std::uint8_t, kCounterCount> bits{};  // width of the last reading; 0 = never read
  };

  // Applies one reading of a port. Returns the clear mask (PortCounters
  // CounterSelect bits 0..15, CounterSelect2 in 16..23) of the narrow
  // counters that passed the policy's threshold; 0 when none or disabled.
  std::uint32_t apply(const PortKey& key, const CounterReading& reading, const ClearPolicy& policy);

  // Records that a PortCounters Set with `mask` succeeded: the selected
  // counters restart from zero, which is not an external clear.
  void note_cleared(const PortKey& key, std::uint32_t mask);

  const State* find(const PortKey& key) const;
  // Per-VL / per-SL counters of the opt-in groups, kept beside the per-port
  // ones so that forgetting a port forgets both.
  LaneAccumulator& lanes() { return lanes_; }
  const LaneAccumulator& lanes() const { return lanes_; }
  void forget(const PortKey& key) {
    ports_.erase(key);
    lanes_.forget(key);
  }
  std::size_t size() const { return ports_.size(); }
  const AccumulatorStats& stats() const { return stats_; }

 private:
  std::unordered_map<PortKey, State, PortKeyHash> ports_;
  AccumulatorStats stats_;
  LaneAccumulator lanes_;
};

}  // namespace ibfx
