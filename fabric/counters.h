// The counter vocabulary: every counter the daemon reads, how wide and how
// scaled it is, the opt-in counter groups and the per-lane counters. Plain
// data, std only, so that the analysis and the renderers can name a counter
// without seeing how a MAD asks for it (mad/pma.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ibfx {

// Every per-port counter we read. The order is the order of rendering.
enum class Counter : std::uint8_t {
  kTransmitWait,
  kTransmitDataBytes,
  kReceiveDataBytes,
  kTransmitPackets,
  kReceivePackets,
  kUnicastTransmitPackets,
  kUnicastReceivePackets,
  kMulticastTransmitPackets,
  kMulticastReceivePackets,
  kSymbolErrors,
  kLinkErrorRecovery,
  kLinkDowned,
  kReceiveErrors,
  kReceiveRemotePhysicalErrors,
  kReceiveSwitchRelayErrors,
  kTransmitDiscards,
  kTransmitConstraintErrors,
  kReceiveConstraintErrors,
  kLocalLinkIntegrityErrors,
  kExcessiveBufferOverrunErrors,
  kVl15Dropped,
  kQp1Dropped,
  // Opt-in groups (config counters.error_details, counters.congestion_control),
  // read only from PMAs that answered their attribute (docs/counters.md).
  // PortRcvErrorDetails (IBA 16.1.4.2): the causes behind PortRcvErrors.
  kPortLocalPhysicalErrors,
  kPortMalformedPacketErrors,
  kPortBufferOverrunErrors,
  kPortDlidMappingErrors,
  kPortVlMappingErrors,
  kPortLoopingErrors,
  // PortXmitDiscardDetails (IBA 16.1.4.3): the causes behind PortXmitDiscards.
  kPortInactiveDiscards,
  kPortNeighborMtuDiscards,
  kPortSwLifetimeLimitDiscards,
  kPortSwHoqLifetimeLimitDiscards,
  // PortRcvConCtrl and PortXmitConCtrl (IBA Annex A10, congestion control).
  kPortPktRcvFecn,
  kPortPktRcvBecn,
  kPortXmitTimeCong,
  kCount
};
inline constexpr std::size_t kCounterCount = static_cast<std::size_t>(Counter::kCount);

// How a counter is read and scaled; its Prometheus name and help belong to
// the render layer (exposition/counter_families.h).
struct CounterInfo {
  // Width of the field in the 32-bit PortCounters attribute (IBA 16.1.3.5);
  // 0 where the counter exists only in PortCountersExtended.
  std::uint8_t narrow_bits;
  // Bit in PortCounters CounterSelect (bits 0..15) or, offset by 16,
  // CounterSelect2 (IBA 16.1.3.5: CounterSelect2 bit 0 = PortXmitWait... see
  // pma.cpp); -1 where the counter cannot be cleared through PortCounters.
  std::int8_t select_bit;
  // Multiplier from device units to exported units: PortXmitData/PortRcvData
  // count 32-bit words (IBA 16.1.3.5 "divided by 4"), exported as bytes.
  std::uint8_t scale;
};

const CounterInfo& counter_info(Counter c);
// The first counter of the opt-in groups: everything before it is read from
// PortCounters / PortCountersExtended on every sweep.
inline constexpr Counter kFirstOptionalCounter = Counter::kPortLocalPhysicalErrors;
inline const CounterInfo& counter_info(std::size_t i) {
  return counter_info(static_cast<Counter>(i));
}

// Values read in one sweep. A counter is present when its bit is set.
struct CounterReading {
  std::array<std::uint64_t, kCounterCount> value{};
  std::array<std::uint8_t, kCounterCount> bits{};  // field width of the source; 0 = absent
  void set(Counter c, std::uint64_t v, std::uint8_t width) {
    value[static_cast<std::size_t>(c)] = v;
    bits[static_cast<std::size_t>(c)] = width;
  }
  bool has(Counter c) const { return bits[static_cast<std::size_t>(c)] != 0; }
};

// The opt-in groups of optional PMA attributes. IBA defines no ClassPortInfo
// CapabilityMask / CapabilityMask2 bit for any of them (libibmad's and
// opensm's IB_PM_* name only AllPortSelect, the extended widths, SamplesOnly,
// PortXmitWait, QP1Dropped, PM_Key and the additional PortCountersExtended
// fields), so support is learnt from one Get per node and attribute.
enum class CounterGroup : std::uint8_t { kErrorDetails, kVlXmitWait, kCongestionControl, kCount };
inline constexpr std::size_t kCounterGroupCount = static_cast<std::size_t>(CounterGroup::kCount);

struct CounterGroups {
  bool error_details = false;
  bool vl_xmit_wait = false;
  bool congestion_control = false;
  bool enabled(CounterGroup g) const {
    switch (g) {
      case CounterGroup::kErrorDetails:
        return error_details;
      case CounterGroup::kVlXmitWait:
        return vl_xmit_wait;
      case CounterGroup::kCongestionControl:
        return congestion_control;
      default:
        return false;
    }
  }
  bool any() const { return error_details || vl_xmit_wait || congestion_control; }
  bool operator==(const CounterGroups&) const = default;
};

// Per-lane (per-VL or per-SL) counters: one array of up to 16 per attribute.
enum class LaneCounter : std::uint8_t {
  kVlXmitWait,      // PortVLXmitWaitCounters.PortVLXmitWait[0..15], 16 bits
  kSlRcvFecn,       // PortSLRcvFECN.PortSLRcvFECN[0..15], 32 bits
  kSlRcvBecn,       // PortSLRcvBECN.PortSLRcvBECN[0..15], 32 bits
  kVlXmitTimeCong,  // PortVLXmitTimeCong.PortVLXmitTimeCong[0..14], 32 bits
  kCount
};
inline constexpr std::size_t kLaneCounterCount = static_cast<std::size_t>(LaneCounter::kCount);
inline constexpr std::size_t kLanes = 16;

struct LaneCounterInfo {
  std::string_view label;  // "vl" or "sl": the lane kind, also the series' label
  std::uint8_t lanes;      // valid lanes (PortVLXmitTimeCong has no VL15)
  std::uint8_t bits;       // field width
};
const LaneCounterInfo& lane_counter_info(LaneCounter c);
inline const LaneCounterInfo& lane_counter_info(std::size_t i) {
  return lane_counter_info(static_cast<LaneCounter>(i));
}

// Per-lane values read in one sweep; an attribute is present when its bit
// width is set.
struct LaneReading {
  std::array<std::array<std::uint64_t, kLanes>, kLaneCounterCount> value{};
  std::array<std::uint8_t, kLaneCounterCount> bits{};
  bool has(LaneCounter c) const { return bits[static_cast<std::size_t>(c)] != 0; }
};

}  // namespace ibfx
