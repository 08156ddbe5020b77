// Performance Management (PMA, management class 0x04) attributes: request
// builders and response decoders. libibmad's field tables do the bit work;
// this file says which attribute and field answers which counter.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
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

// PMA ClassPortInfo.CapabilityMask bits (IBA 16.1.3.1, Table 227 footnotes;
// same values as opensm's ib_types.h IB_PM_*).
namespace pma_cap {
inline constexpr std::uint16_t kAllPortSelect = 1u << 8;
inline constexpr std::uint16_t kExtWidth = 1u << 9;  // PortCountersExtended, all fields
inline constexpr std::uint16_t kExtWidthNoIetf = 1u
                                                 << 10;  // PortCountersExtended, no uni/multicast
inline constexpr std::uint16_t kSamplesOnly = 1u << 11;
inline constexpr std::uint16_t kXmitWait = 1u << 12;  // PortCounters.PortXmitWait valid
inline constexpr std::uint16_t kQp1Dropped = 1u << 15;
// CapabilityMask2 bit 1: IsAdditionalPortCountersExtendedSupported — the
// 64-bit error counters and PortXmitWait in PortCountersExtended.
inline constexpr std::uint32_t kAddlPortCountersExt = 1u << 1;
}  // namespace pma_cap

struct PmaCapabilities {
  std::uint16_t cap_mask = 0;
  std::uint32_t cap_mask2 = 0;
  bool extended() const {
    return (cap_mask & (pma_cap::kExtWidth | pma_cap::kExtWidthNoIetf)) != 0;
  }
  bool extended_uni_multicast() const { return (cap_mask & pma_cap::kExtWidth) != 0; }
  bool xmit_wait() const { return (cap_mask & pma_cap::kXmitWait) != 0; }
  bool additional_extended() const { return (cap_mask2 & pma_cap::kAddlPortCountersExt) != 0; }
  // Whether PortCounters (32-bit) is still needed once PortCountersExtended
  // is read: it is, unless the extended attribute carries the error counters.
  bool needs_port_counters() const { return !(extended() && additional_extended()); }
  // PortSamplesControl.Tick (IBA 16.1.3.2): the PMA's sampling tick, which
  // also times PortXmitWait; -1 where the PMA did not say.
  int sample_tick = -1;
};

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

// PMA attribute IDs (IBA 16.1.2, Table 220).
inline constexpr std::uint16_t kAttrClassPortInfo = 0x0001;
inline constexpr std::uint16_t kAttrPortSamplesControl = 0x0010;
inline constexpr std::uint16_t kAttrPortCounters = 0x0012;
inline constexpr std::uint16_t kAttrPortCountersExtended = 0x001D;

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

// One optional attribute of a group.
enum class OptionalAttr : std::uint8_t {
  kRcvErrorDetails,     // PortRcvErrorDetails 0x0015
  kXmitDiscardDetails,  // PortXmitDiscardDetails 0x0016
  kVlXmitWait,          // PortVLXmitWaitCounters 0x001C
  kRcvConCtrl,          // PortRcvConCtrl (A10) 0x0031
  kSlRcvFecn,           // PortSLRcvFECN (A10) 0x0032
  kSlRcvBecn,           // PortSLRcvBECN (A10) 0x0033
  kXmitConCtrl,         // PortXmitConCtrl (A10) 0x0034
  kVlXmitTimeCong,      // PortVLXmitTimeCong (A10) 0x0035
  kCount
};
inline constexpr std::size_t kOptionalAttrCount = static_cast<std::size_t>(OptionalAttr::kCount);

struct OptionalAttrInfo {
  std::uint16_t attr_id;
  CounterGroup group;
  std::string_view name;  // IBA attribute name, for logs and docs
};
const OptionalAttrInfo& optional_attr_info(OptionalAttr a);
inline const OptionalAttrInfo& optional_attr_info(std::size_t i) {
  return optional_attr_info(static_cast<OptionalAttr>(i));
}

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

inline constexpr std::size_t kMadSize = 256;
inline constexpr std::size_t kPmaDataOffset = 64;  // 24-byte header + 40 reserved
inline constexpr std::size_t kPmaDataSize = kMadSize - kPmaDataOffset;
using PmaData = std::array<std::uint8_t, kPmaDataSize>;

// Request payloads (the PMA data area, libibmad's IB_PC_* field base).
PmaData port_counters_request(std::uint8_t port);
PmaData port_counters_ext_request(std::uint8_t port);
PmaData port_samples_control_request(std::uint8_t port);
// A PortCounters Set that clears exactly the counters whose select bits are
// given (CounterSelect bits 0..15, CounterSelect2 bits in 16..23).
PmaData port_counters_clear_request(std::uint8_t port, std::uint32_t select_mask);

PmaCapabilities decode_class_port_info(const PmaData& data);
// PortSamplesControl.Tick from a PortSamplesControl Get response.
int decode_sample_tick(const PmaData& data);
// Decodes PortCounters into `out`. PortXmitWait is taken only when
// capabilities say it is valid; QP1Dropped only with IsQP1DropSupported.
void decode_port_counters(const PmaData& data, const PmaCapabilities& caps, CounterReading& out);
// Decodes PortCountersExtended into `out` (64-bit), including the additional
// error counters and PortXmitWait when CapabilityMask2 advertises them.
void decode_port_counters_ext(const PmaData& data, const PmaCapabilities& caps,
                              CounterReading& out);
// Get of an optional attribute for one port (PortSelect at the PortCounters
// offset, as libibmad's tables for all of them say).
PmaData optional_attr_request(std::uint8_t port);
// Decodes an optional attribute's response: scalar fields into `out`,
// per-lane fields into `lanes`.
void decode_optional_attr(OptionalAttr attr, const PmaData& data, CounterReading& out,
                          LaneReading& lanes);

// PortSelect echoed back in a response (for sanity checks).
std::uint8_t decoded_port_select(const PmaData& data);

}  // namespace ibfx
