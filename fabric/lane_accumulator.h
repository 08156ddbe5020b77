// Monotonic totals of the per-lane (per-VL, per-SL) counters of the opt-in
// groups (PortVLXmitWaitCounters, PortSLRcvFECN/BECN, PortVLXmitTimeCong),
// accumulated like every per-port counter (fabric/counter_step.h): width
// aware, out-of-band clears detected. Kept per port *and* attribute, so a
// port read for one group holds no memory for the others.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fabric/counters.h"
#include "fabric/fabric.h"
#include "fabric/port_key.h"

namespace ibfx {

// Totals of one lane attribute of one port, as a snapshot copies them.
struct PortLaneTotals {
  std::uint32_t port = 0;  // flat index over the fabric's ports (node order)
  LaneCounter counter = LaneCounter::kVlXmitWait;
  std::array<std::uint64_t, kLanes> total{};
};

class LaneAccumulator {
 public:
  struct State {
    std::array<std::uint64_t, kLanes> last{};
    std::array<std::uint64_t, kLanes> total{};
    std::uint8_t bits = 0;  // width of the last reading; 0 = never read
  };

  // Applies the attributes present in `reading` to the port's totals.
  void apply(const PortKey& key, const LaneReading& reading);
  const State* find(const PortKey& key, LaneCounter c) const;
  void forget(const PortKey& key);
  std::size_t size() const { return states_.size(); }
  // Decreases without a clear of ours, per attribute (any lane).
  const std::array<std::uint64_t, kLaneCounterCount>& external_clears() const {
    return external_clears_;
  }

 private:
  struct Key {
    PortKey port;
    LaneCounter counter{};
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return PortKeyHash{}(k.port) * 31 + static_cast<std::size_t>(k.counter);
    }
  };
  std::unordered_map<Key, State, KeyHash> states_;
  std::array<std::uint64_t, kLaneCounterCount> external_clears_{};
};

// The lane totals of every port of `fabric` that has any, in the fabric's
// port order (what a snapshot renders). Empty, and nearly free, when no
// lane group is on.
std::vector<PortLaneTotals> lane_totals(const Fabric& fabric, const LaneAccumulator& lanes);

}  // namespace ibfx
