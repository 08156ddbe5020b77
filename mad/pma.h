// Performance Management (PMA, management class 0x04) attributes: request
// builders and response decoders. libibmad's field tables do the bit work;
// this file says which attribute and field answers which counter (the
// counters themselves, what the daemon knows, are fabric/counters.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "fabric/counters.h"

namespace ibfx {

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

// PMA attribute IDs (IBA 16.1.2, Table 220).
inline constexpr std::uint16_t kAttrClassPortInfo = 0x0001;
inline constexpr std::uint16_t kAttrPortSamplesControl = 0x0010;
inline constexpr std::uint16_t kAttrPortCounters = 0x0012;
inline constexpr std::uint16_t kAttrPortCountersExtended = 0x001D;

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
