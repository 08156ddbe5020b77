#include "mad/pma.h"

#include <infiniband/mad.h>

namespace ibfx {
namespace {

constexpr OptionalAttrInfo kOptionalAttrs[kOptionalAttrCount] = {
    {IB_GSI_PORT_RCV_ERROR_DETAILS, CounterGroup::kErrorDetails, "PortRcvErrorDetails"},
    {IB_GSI_PORT_XMIT_DISCARD_DETAILS, CounterGroup::kErrorDetails, "PortXmitDiscardDetails"},
    {IB_GSI_PORT_PORT_VL_XMIT_WAIT_COUNTERS, CounterGroup::kVlXmitWait, "PortVLXmitWaitCounters"},
    {IB_GSI_PORT_RCV_CON_CTRL, CounterGroup::kCongestionControl, "PortRcvConCtrl"},
    {IB_GSI_PORT_SL_RCV_FECN, CounterGroup::kCongestionControl, "PortSLRcvFECN"},
    {IB_GSI_PORT_SL_RCV_BECN, CounterGroup::kCongestionControl, "PortSLRcvBECN"},
    {IB_GSI_PORT_XMIT_CON_CTRL, CounterGroup::kCongestionControl, "PortXmitConCtrl"},
    {IB_GSI_PORT_VL_XMIT_TIME_CONG, CounterGroup::kCongestionControl, "PortVLXmitTimeCong"},
};

// The first field of each lane array in libibmad's table; the others follow
// in lane order.
constexpr MAD_FIELDS kLaneFirstField[kLaneCounterCount] = {
    IB_PC_PORT_VL_XMIT_WAIT0_F, IB_PC_SL_RCV_FECN0_F, IB_PC_SL_RCV_BECN0_F,
    IB_PC_VL_XMIT_TIME_CONG0_F};

// libibmad's field accessors take a mutable pointer even to read.
std::uint8_t* mut(const PmaData& d) { return const_cast<std::uint8_t*>(d.data()); }

std::uint32_t get32(const PmaData& d, MAD_FIELDS f) { return mad_get_field(mut(d), 0, f); }
std::uint64_t get64(const PmaData& d, MAD_FIELDS f) { return mad_get_field64(mut(d), 0, f); }

struct NarrowField {
  Counter counter;
  MAD_FIELDS field;
};
constexpr NarrowField kNarrowErrorFields[] = {
    {Counter::kSymbolErrors, IB_PC_ERR_SYM_F},
    {Counter::kLinkErrorRecovery, IB_PC_LINK_RECOVERS_F},
    {Counter::kLinkDowned, IB_PC_LINK_DOWNED_F},
    {Counter::kReceiveErrors, IB_PC_ERR_RCV_F},
    {Counter::kReceiveRemotePhysicalErrors, IB_PC_ERR_PHYSRCV_F},
    {Counter::kReceiveSwitchRelayErrors, IB_PC_ERR_SWITCH_REL_F},
    {Counter::kTransmitDiscards, IB_PC_XMT_DISCARDS_F},
    {Counter::kTransmitConstraintErrors, IB_PC_ERR_XMTCONSTR_F},
    {Counter::kReceiveConstraintErrors, IB_PC_ERR_RCVCONSTR_F},
    {Counter::kLocalLinkIntegrityErrors, IB_PC_ERR_LOCALINTEG_F},
    {Counter::kExcessiveBufferOverrunErrors, IB_PC_ERR_EXCESS_OVR_F},
    {Counter::kVl15Dropped, IB_PC_VL15_DROPPED_F},
};
constexpr NarrowField kNarrowTrafficFields[] = {
    {Counter::kTransmitDataBytes, IB_PC_XMT_BYTES_F},
    {Counter::kReceiveDataBytes, IB_PC_RCV_BYTES_F},
    {Counter::kTransmitPackets, IB_PC_XMT_PKTS_F},
    {Counter::kReceivePackets, IB_PC_RCV_PKTS_F},
};
constexpr NarrowField kExtTrafficFields[] = {
    {Counter::kTransmitDataBytes, IB_PC_EXT_XMT_BYTES_F},
    {Counter::kReceiveDataBytes, IB_PC_EXT_RCV_BYTES_F},
    {Counter::kTransmitPackets, IB_PC_EXT_XMT_PKTS_F},
    {Counter::kReceivePackets, IB_PC_EXT_RCV_PKTS_F},
};
constexpr NarrowField kExtUniMulticastFields[] = {
    {Counter::kUnicastTransmitPackets, IB_PC_EXT_XMT_UPKTS_F},
    {Counter::kUnicastReceivePackets, IB_PC_EXT_RCV_UPKTS_F},
    {Counter::kMulticastTransmitPackets, IB_PC_EXT_XMT_MPKTS_F},
    {Counter::kMulticastReceivePackets, IB_PC_EXT_RCV_MPKTS_F},
};
// IBA 1.3 Table 260: the additional 64-bit counters of PortCountersExtended,
// valid only with CapabilityMask2.IsAdditionalPortCountersExtendedSupported.
constexpr NarrowField kExtErrorFields[] = {
    {Counter::kSymbolErrors, IB_PC_EXT_ERR_SYM_F},
    {Counter::kLinkErrorRecovery, IB_PC_EXT_LINK_RECOVERS_F},
    {Counter::kLinkDowned, IB_PC_EXT_LINK_DOWNED_F},
    {Counter::kReceiveErrors, IB_PC_EXT_ERR_RCV_F},
    {Counter::kReceiveRemotePhysicalErrors, IB_PC_EXT_ERR_PHYSRCV_F},
    {Counter::kReceiveSwitchRelayErrors, IB_PC_EXT_ERR_SWITCH_REL_F},
    {Counter::kTransmitDiscards, IB_PC_EXT_XMT_DISCARDS_F},
    {Counter::kTransmitConstraintErrors, IB_PC_EXT_ERR_XMTCONSTR_F},
    {Counter::kReceiveConstraintErrors, IB_PC_EXT_ERR_RCVCONSTR_F},
    {Counter::kLocalLinkIntegrityErrors, IB_PC_EXT_ERR_LOCALINTEG_F},
    {Counter::kExcessiveBufferOverrunErrors, IB_PC_EXT_ERR_EXCESS_OVR_F},
    {Counter::kVl15Dropped, IB_PC_EXT_VL15_DROPPED_F},
    {Counter::kTransmitWait, IB_PC_EXT_XMT_WAIT_F},
    {Counter::kQp1Dropped, IB_PC_EXT_QP1_DROP_F},
};

constexpr NarrowField kRcvErrorDetailFields[] = {
    {Counter::kPortLocalPhysicalErrors, IB_PC_RCV_LOCAL_PHY_ERR_F},
    {Counter::kPortMalformedPacketErrors, IB_PC_RCV_MALFORMED_PKT_ERR_F},
    {Counter::kPortBufferOverrunErrors, IB_PC_RCV_BUF_OVR_ERR_F},
    {Counter::kPortDlidMappingErrors, IB_PC_RCV_DLID_MAP_ERR_F},
    {Counter::kPortVlMappingErrors, IB_PC_RCV_VL_MAP_ERR_F},
    {Counter::kPortLoopingErrors, IB_PC_RCV_LOOPING_ERR_F},
};
constexpr NarrowField kXmitDiscardDetailFields[] = {
    {Counter::kPortInactiveDiscards, IB_PC_XMT_INACT_DISC_F},
    {Counter::kPortNeighborMtuDiscards, IB_PC_XMT_NEIGH_MTU_DISC_F},
    {Counter::kPortSwLifetimeLimitDiscards, IB_PC_XMT_SW_LIFE_DISC_F},
    {Counter::kPortSwHoqLifetimeLimitDiscards, IB_PC_XMT_SW_HOL_DISC_F},
};
constexpr NarrowField kRcvConCtrlFields[] = {
    {Counter::kPortPktRcvFecn, IB_PC_RCV_CON_CTRL_PKT_RCV_FECN_F},
    {Counter::kPortPktRcvBecn, IB_PC_RCV_CON_CTRL_PKT_RCV_BECN_F},
};
constexpr NarrowField kXmitConCtrlFields[] = {
    {Counter::kPortXmitTimeCong, IB_PC_XMIT_CON_CTRL_TIME_CONG_F},
};

template <std::size_t N>
void decode_fields(const NarrowField (&fields)[N], const PmaData& data, CounterReading& out) {
  for (const auto& f : fields)
    out.set(f.counter, get32(data, f.field), counter_info(f.counter).narrow_bits);
}

void decode_lanes(LaneCounter c, const PmaData& data, LaneReading& out) {
  const auto i = static_cast<std::size_t>(c);
  const LaneCounterInfo& info = lane_counter_info(c);
  for (std::size_t lane = 0; lane < info.lanes; ++lane) {
    out.value[i][lane] = get32(data, static_cast<MAD_FIELDS>(kLaneFirstField[i] + lane));
  }
  out.bits[i] = info.bits;
}

}  // namespace

const OptionalAttrInfo& optional_attr_info(OptionalAttr a) {
  return kOptionalAttrs[static_cast<std::size_t>(a)];
}

PmaData optional_attr_request(std::uint8_t port) { return port_counters_request(port); }

void decode_optional_attr(OptionalAttr attr, const PmaData& data, CounterReading& out,
                          LaneReading& lanes) {
  switch (attr) {
    case OptionalAttr::kRcvErrorDetails:
      decode_fields(kRcvErrorDetailFields, data, out);
      break;
    case OptionalAttr::kXmitDiscardDetails:
      decode_fields(kXmitDiscardDetailFields, data, out);
      break;
    case OptionalAttr::kVlXmitWait:
      decode_lanes(LaneCounter::kVlXmitWait, data, lanes);
      break;
    case OptionalAttr::kRcvConCtrl:
      decode_fields(kRcvConCtrlFields, data, out);
      break;
    case OptionalAttr::kSlRcvFecn:
      decode_lanes(LaneCounter::kSlRcvFecn, data, lanes);
      break;
    case OptionalAttr::kSlRcvBecn:
      decode_lanes(LaneCounter::kSlRcvBecn, data, lanes);
      break;
    case OptionalAttr::kXmitConCtrl:
      decode_fields(kXmitConCtrlFields, data, out);
      break;
    case OptionalAttr::kVlXmitTimeCong:
      decode_lanes(LaneCounter::kVlXmitTimeCong, data, lanes);
      break;
    default:
      break;
  }
}

PmaData port_counters_request(std::uint8_t port) {
  PmaData d{};
  mad_set_field(d.data(), 0, IB_PC_PORT_SELECT_F, port);
  return d;
}

PmaData port_counters_ext_request(std::uint8_t port) {
  PmaData d{};
  mad_set_field(d.data(), 0, IB_PC_EXT_PORT_SELECT_F, port);
  return d;
}

PmaData port_samples_control_request(std::uint8_t port) {
  PmaData d{};
  mad_set_field(d.data(), 0, IB_PSC_PORT_SELECT_F, port);
  return d;
}

PmaData port_counters_clear_request(std::uint8_t port, std::uint32_t select_mask) {
  PmaData d{};
  mad_set_field(d.data(), 0, IB_PC_PORT_SELECT_F, port);
  mad_set_field(d.data(), 0, IB_PC_COUNTER_SELECT_F, select_mask & 0xFFFFu);
  mad_set_field(d.data(), 0, IB_PC_COUNTER_SELECT2_F, (select_mask >> 16) & 0xFFu);
  return d;
}

PmaCapabilities decode_class_port_info(const PmaData& data) {
  PmaCapabilities caps;
  caps.cap_mask = static_cast<std::uint16_t>(get32(data, IB_CPI_CAPMASK_F));
  caps.cap_mask2 = get32(data, IB_CPI_CAPMASK2_F);
  return caps;
}

int decode_sample_tick(const PmaData& data) { return static_cast<int>(get32(data, IB_PSC_TICK_F)); }

void decode_port_counters(const PmaData& data, const PmaCapabilities& caps, CounterReading& out) {
  for (const auto& f : kNarrowErrorFields) {
    out.set(f.counter, get32(data, f.field), counter_info(f.counter).narrow_bits);
  }
  for (const auto& f : kNarrowTrafficFields) {
    out.set(f.counter, get32(data, f.field), counter_info(f.counter).narrow_bits);
  }
  // PortXmitWait is optional in PortCounters (IBA 16.1.3.5, CapabilityMask
  // bit 12); without the bit the field is reserved and must not be read.
  if (caps.xmit_wait()) {
    out.set(Counter::kTransmitWait, get32(data, IB_PC_XMT_WAIT_F), 32);
  }
  if (caps.cap_mask & pma_cap::kQp1Dropped) {
    out.set(Counter::kQp1Dropped, get32(data, IB_PC_QP1_DROP_F), 16);
  }
}

void decode_port_counters_ext(const PmaData& data, const PmaCapabilities& caps,
                              CounterReading& out) {
  for (const auto& f : kExtTrafficFields) out.set(f.counter, get64(data, f.field), 64);
  if (caps.extended_uni_multicast()) {
    for (const auto& f : kExtUniMulticastFields) out.set(f.counter, get64(data, f.field), 64);
  }
  if (caps.additional_extended()) {
    for (const auto& f : kExtErrorFields) out.set(f.counter, get64(data, f.field), 64);
  }
}

std::uint8_t decoded_port_select(const PmaData& data) {
  return static_cast<std::uint8_t>(get32(data, IB_PC_PORT_SELECT_F));
}

}  // namespace ibfx
