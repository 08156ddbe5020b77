// One counter's step from the previous raw reading to the next, shared by
// the per-port (CounterAccumulator) and per-lane (LaneAccumulator) tables:
// monotonic 64-bit totals from narrow, possibly cleared, device counters.
#pragma once

#include <cstdint>

namespace ibfx {

enum class CounterStep : std::uint8_t {
  kFirst,          // first reading: the device's value is the starting total
  kRebased,        // the field changed width: this interval's delta is unknown
  kDelta,          // raw >= last: the difference was added
  kExternalClear,  // raw < last: cleared out of band, raw was added
};

inline std::uint64_t counter_field_max(std::uint8_t bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

// Applies `raw` (a field `bits` wide) to the state (last raw value, total,
// width of the last reading; 0 = never read) and returns what happened.
inline CounterStep step_counter(std::uint64_t& last, std::uint64_t& total, std::uint8_t& last_bits,
                                std::uint64_t raw, std::uint8_t bits) {
  CounterStep step;
  if (last_bits == 0) {
    // Like a sysfs counter read by node_exporter: start from the device's value.
    total = raw;
    step = CounterStep::kFirst;
  } else if (last_bits != bits) {
    // The source changed width (capabilities changed): the two readings are
    // not comparable. Rebase.
    step = CounterStep::kRebased;
  } else if (raw >= last) {
    total += raw - last;
    step = CounterStep::kDelta;
  } else {
    // Decreased: cleared out of band (perfquery -R, another PerfMgr...).
    // Everything counted since the clear is the new value.
    total += raw;
    step = CounterStep::kExternalClear;
  }
  last = raw;
  last_bits = bits;
  return step;
}

}  // namespace ibfx
