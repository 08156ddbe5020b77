// Per-port inputs and outputs of the analysis: one port's counter deltas over
// an interval, and what the analysis makes of them (stall ratio W,
// utilisation U, hotspot score).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "analysis/topology.h"
#include "fabric/counters.h"

namespace ibfx {

// One port's counter deltas over one interval.
struct PortSample {
  std::int32_t node = kNoNode;
  std::uint32_t port_index = 0;  // index into FabricNode::ports (not the port number)
  bool has_xmit_wait = true;     // false: the PMA does not count PortXmitWait
  int device_tick = -1;          // PortSamplesControl.Tick the PMA reported; -1: unknown
  std::uint64_t xmit_wait_ticks = 0;
  std::uint64_t xmit_data_words = 0;  // PortXmitData: 4-byte words
  std::uint64_t error_count = 0;      // sum of the error counters' deltas
  double interval_seconds = 0;        // time between the two readings
};

// Deltas between two readings of monotonic totals (CounterAccumulator
// totals); a total that went backwards counts as 0. Errors are the link and
// receive error counters, SymbolErrors through ExcessiveBufferOverrunErrors.
PortSample make_port_sample(std::int32_t node, std::uint32_t port_index,
                            const std::array<std::uint64_t, kCounterCount>& before,
                            const std::array<std::uint64_t, kCounterCount>& after,
                            double interval_seconds);

struct PortScore {
  std::int32_t node = kNoNode;
  std::uint32_t port_index = 0;
  Tier tier = Tier::kUnknown;
  int rail = kNoRail;  // peer-group rail: rail for HCAs/leaves, single_rail above
  PortDirection direction = PortDirection::kNone;
  bool valid = false;     // false: no PortXmitWait, no tick length or no interval
  bool clamped = false;   // the raw ratio was outside [0, 1]
  double stall = 0;       // W in [0, 1]
  double score = 0;       // (W - median(peers)) / max(1.4826 MAD(peers), mad_floor)
  std::size_t peers = 0;  // size of the peer group (the port included)
  // U: transmitted bytes per second / the link's data rate, in [0, 1];
  // utilization_valid false without a link rate or an interval.
  bool utilization_valid = false;
  double utilization = 0;
};

}  // namespace ibfx
