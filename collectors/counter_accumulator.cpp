#include "collectors/counter_accumulator.h"

namespace ibfx {
namespace {
std::uint64_t field_max(std::uint8_t bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}
}  // namespace

std::uint32_t CounterAccumulator::apply(const PortKey& key, const CounterReading& reading,
                                        const ClearPolicy& policy) {
  State& s = ports_[key];
  std::uint32_t clear_mask = 0;
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    const std::uint8_t bits = reading.bits[i];
    if (bits == 0) continue;
    const std::uint64_t raw = reading.value[i];
    const std::uint64_t max = field_max(bits);
    if (s.bits[i] == 0) {
      // First reading: the device's value is the starting total, like a
      // sysfs counter read by node_exporter.
      s.total[i] = raw;
    } else if (s.bits[i] != bits) {
      // The source changed width (capabilities changed): the two readings
      // are not comparable, so this interval's delta is unknown. Rebase.
    } else if (raw >= s.last[i]) {
      s.total[i] += raw - s.last[i];
      if (i == static_cast<std::size_t>(Counter::kLinkDowned)) stats_.link_downed_deltas += raw - s.last[i];
    } else {
      // Decreased: cleared out of band (by perfquery -R, another PerfMgr...).
      // Everything counted since the clear is the new value.
      s.total[i] += raw;
      ++stats_.external_clears[i];
    }
    if (bits < 64 && raw == max && !(s.bits[i] == bits && s.last[i] == max)) {
      ++stats_.saturations[i];  // counted once per episode, not per sweep
    }
    s.last[i] = raw;
    s.bits[i] = bits;
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
