// What the analysis benches share: their clock, and the counters of one
// interval of a synthetic load on 4x HDR ports, given W and U per port (the
// benches choose the W and U: a background with noise and some incasts).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "analysis/port_score.h"
#include "bench/proc_stat.h"

namespace ibfx::bench {

inline constexpr double kInterval = 10;
inline constexpr double kRate = 25e9;                    // 4x HDR, bytes per second
inline constexpr double kTickSeconds = 8.0 * 4 / kRate;  // the IBA unit on 4x HDR

// Port `port_index` of node `node` over one kInterval at stall ratio `w` and
// utilisation `u` (capped at 1).
inline PortSample synthetic_sample(std::size_t node, std::size_t port_index, double w, double u) {
  PortSample s;
  s.node = static_cast<std::int32_t>(node);
  s.port_index = static_cast<std::uint32_t>(port_index);
  s.xmit_wait_ticks = static_cast<std::uint64_t>(w * kInterval / kTickSeconds);
  s.xmit_data_words = static_cast<std::uint64_t>(std::min(1.0, u) * kRate * kInterval / 4);
  s.interval_seconds = kInterval;
  return s;
}

}  // namespace ibfx::bench
