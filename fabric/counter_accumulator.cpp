#include "fabric/counter_accumulator.h"

namespace ibfx {

std::uint32_t CounterAccumulator::apply(const PortKey& key, const CounterReading& reading,
                                        const ClearPolicy& policy) {
  State& s = ports_[key];
  std::uint32_t clear_mask = 0;
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    const std::uint8_t bits = reading.bits[i];
    if (bits == 0) continue;
    const std::uint64_t raw = reading.value[i];
    const std::uint64_t max = counter_field_max(bits);
    const bool was_max = s.bits[i] == bits && s.last[i] == max;
    const std::uint64_t before = s.last[i];
    switch (step_counter(s.last[i], s.total[i], s.bits[i], raw, bits)) {
      case CounterStep::kDelta:
        if (i == static_cast<std::size_t>(Counter::kLinkDowned))
          stats_.link_downed_deltas += raw - before;
        break;
      case CounterStep::kExternalClear:
        ++stats_.external_clears[i];
        break;
      default:
        break;
    }
    if (bits < 64 && raw == max && !was_max) {
      ++stats_.saturations[i];  // counted once per episode, not per sweep
    }
    const std::int8_t select = counter_info(i).select_bit;
    if (policy.enabled && bits < 64 && select >= 0 &&
        static_cast<double>(raw) >= policy.threshold * static_cast<double>(max)) {
      clear_mask |= 1u << select;
    }
  }
  return clear_mask;
}

void CounterAccumulator::note_cleared(const PortKey& key, std::uint32_t mask) {
  auto it = ports_.find(key);
  if (it == ports_.end()) return;
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    const std::int8_t select = counter_info(i).select_bit;
    if (select < 0 || !(mask & (1u << select))) continue;
    // Counts between our read and the clear are lost; they are few next to
    // the threshold, and the alternative (a saturated counter) loses all.
    it->second.last[i] = 0;
    ++stats_.clears[i];
  }
}

const CounterAccumulator::State* CounterAccumulator::find(const PortKey& key) const {
  auto it = ports_.find(key);
  return it == ports_.end() ? nullptr : &it->second;
}

}  // namespace ibfx
