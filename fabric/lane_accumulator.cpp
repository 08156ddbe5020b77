#include "fabric/lane_accumulator.h"

#include "fabric/counter_step.h"

namespace ibfx {

void LaneAccumulator::apply(const PortKey& key, const LaneReading& reading) {
  for (std::size_t c = 0; c < kLaneCounterCount; ++c) {
    const std::uint8_t bits = reading.bits[c];
    if (bits == 0) continue;
    State& s = states_[Key{key, static_cast<LaneCounter>(c)}];
    const std::uint8_t lanes = lane_counter_info(c).lanes;
    bool cleared = false;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      // Every lane shares the attribute's width: step each with a copy of
      // the previous width, and store it once.
      std::uint8_t last_bits = s.bits;
      cleared = step_counter(s.last[lane], s.total[lane], last_bits, reading.value[c][lane],
                             bits) == CounterStep::kExternalClear ||
                cleared;
    }
    s.bits = bits;
    if (cleared) ++external_clears_[c];
  }
}

const LaneAccumulator::State* LaneAccumulator::find(const PortKey& key, LaneCounter c) const {
  auto it = states_.find(Key{key, c});
  return it == states_.end() ? nullptr : &it->second;
}

void LaneAccumulator::forget(const PortKey& key) {
  if (states_.empty()) return;
  for (std::size_t c = 0; c < kLaneCounterCount; ++c) {
    states_.erase(Key{key, static_cast<LaneCounter>(c)});
  }
}

std::vector<PortLaneTotals> lane_totals(const Fabric& fabric, const LaneAccumulator& lanes) {
  std::vector<PortLaneTotals> out;
  if (lanes.size() == 0) return out;
  out.reserve(lanes.size());
  std::uint32_t flat = 0;
  for (const FabricNode& node : fabric.nodes) {
    for (const FabricPort& port : node.ports) {
      for (std::size_t c = 0; c < kLaneCounterCount; ++c) {
        const auto counter = static_cast<LaneCounter>(c);
        if (const auto* s = lanes.find(PortKey{node.guid, port.number}, counter)) {
          out.push_back(PortLaneTotals{flat, counter, s->total});
        }
      }
      ++flat;
    }
  }
  return out;
}

}  // namespace ibfx
