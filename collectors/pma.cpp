#include "collectors/pma.h"

#include <infiniband/mad.h>

namespace ibfx {
namespace {

// Field widths and CounterSelect bits: IBA 1.3 Table 247 (PortCounters) and
// infiniband-diags' clear masks (errors 0x0FFF, data/packets 0xF000,
// CounterSelect2 bit 0 -> mask bit 16 for PortXmitWait).
constexpr CounterInfo kCounters[kCounterCount] = {
    {"infiniband_port_transmit_wait_total",
     "Ticks during which the port had data to send but no flow-control credits (PortXmitWait).",
     32, 16, 1},
    {"infiniband_port_transmit_data_bytes_total",
     "Bytes transmitted on the port (PortXmitData, device counts 4-octet words).", 32, 12, 4},
    {"infiniband_port_receive_data_bytes_total",
     "Bytes received on the port (PortRcvData, device counts 4-octet words).", 32, 13, 4},
    {"infiniband_port_transmit_packets_total", "Packets transmitted on the port (PortXmitPkts).",
     32, 14, 1},
    {"infiniband_port_receive_packets_total", "Packets received on the port (PortRcvPkts).", 32,
     15, 1},
    {"infiniband_port_unicast_transmit_packets_total",
     "Unicast packets transmitted (PortUnicastXmitPkts).", 0, -1, 1},
    {"infiniband_port_unicast_receive_packets_total",
     "Unicast packets received (PortUnicastRcvPkts).", 0, -1, 1},
    {"infiniband_port_multicast_transmit_packets_total",
     "Multicast packets transmitted (PortMulticastXmitPkts).", 0, -1, 1},
    {"infiniband_port_multicast_receive_packets_total",
     "Multicast packets received (PortMulticastRcvPkts).", 0, -1, 1},
    {"infiniband_port_symbol_errors_total", "Minor link errors detected (SymbolErrorCounter).", 16,
     0, 1},
    {"infiniband_port_link_error_recovery_total",
     "Successful link error recoveries (LinkErrorRecoveryCounter).", 8, 1, 1},
    {"infiniband_port_link_downed_total", "Failed link error recoveries: link went down (LinkDownedCounter).",
     8, 2, 1},
    {"infiniband_port_receive_errors_total", "Received packets containing an error (PortRcvErrors).",
     16, 3, 1},
    {"infiniband_port_receive_remote_physical_errors_total",
     "Received packets marked with the EBP delimiter (PortRcvRemotePhysicalErrors).", 16, 4, 1},
    {"infiniband_port_receive_switch_relay_errors_total",
     "Received packets discarded because they could not be forwarded (PortRcvSwitchRelayErrors).",
     16, 5, 1},
    {"infiniband_port_transmit_discards_total",
     "Outbound packets discarded because the port was down or congested (PortXmitDiscards).", 16,
     6, 1},
    {"infiniband_port_transmit_constraint_errors_total",
     "Outbound packets not transmitted due to constraints (PortXmitConstraintErrors).", 8, 7, 1},
    {"infiniband_port_receive_constraint_errors_total",
     "Inbound packets discarded due to constraints (PortRcvConstraintErrors).", 8, 8, 1},
    {"infiniband_port_local_link_integrity_errors_total",
     "Times local physical errors exceeded the threshold (LocalLinkIntegrityErrors).", 4, 9, 1},
    {"infiniband_port_excessive_buffer_overrun_errors_total",
     "Times consecutive flow-control update periods had buffer overruns "
     "(ExcessiveBufferOverrunErrors).",
     4, 10, 1},
    {"infiniband_port_vl15_dropped_total",
     "Incoming VL15 (subnet management) packets dropped (VL15Dropped).", 16, 11, 1},
    {"infiniband_port_qp1_dropped_total",
     "Incoming QP1 (general management) packets dropped (QP1Dropped).", 16, -1, 1},
};

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

}  // namespace

const CounterInfo& counter_info(Counter c) { return kCounters[static_cast<std::size_t>(c)]; }

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

int decode_sample_tick(const PmaData& data) {
  return static_cast<int>(get32(data, IB_PSC_TICK_F));
}

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
