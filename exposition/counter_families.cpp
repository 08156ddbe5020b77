#include "exposition/counter_families.h"

#include <iterator>

namespace ibfx {
namespace {

constexpr std::string_view kPortLabels = "node_guid,port";
constexpr std::string_view kVlLabels = "node_guid,port,vl";
constexpr std::string_view kSlLabels = "node_guid,port,sl";

// In the order of mad/pma.h Counter; the field each counts is named
// in its help, as the IBA spells it (PortCounters, IBA 16.1.3.5;
// PortCountersExtended, 16.1.4.11; the detail attributes, 16.1.4).
constexpr MetricFamily kCounterFamilies[] = {
    {"infiniband_port_transmit_wait_total", "counter",
     "Ticks during which the port had data to send but no flow-control credits (PortXmitWait).",
     kPortLabels},
    {"infiniband_port_transmit_data_bytes_total", "counter",
     "Bytes transmitted on the port (PortXmitData, device counts 4-octet words).", kPortLabels},
    {"infiniband_port_receive_data_bytes_total", "counter",
     "Bytes received on the port (PortRcvData, device counts 4-octet words).", kPortLabels},
    {"infiniband_port_transmit_packets_total", "counter",
     "Packets transmitted on the port (PortXmitPkts).", kPortLabels},
    {"infiniband_port_receive_packets_total", "counter",
     "Packets received on the port (PortRcvPkts).", kPortLabels},
    {"infiniband_port_unicast_transmit_packets_total", "counter",
     "Unicast packets transmitted (PortUnicastXmitPkts).", kPortLabels},
    {"infiniband_port_unicast_receive_packets_total", "counter",
     "Unicast packets received (PortUnicastRcvPkts).", kPortLabels},
    {"infiniband_port_multicast_transmit_packets_total", "counter",
     "Multicast packets transmitted (PortMulticastXmitPkts).", kPortLabels},
    {"infiniband_port_multicast_receive_packets_total", "counter",
     "Multicast packets received (PortMulticastRcvPkts).", kPortLabels},
    {"infiniband_port_symbol_errors_total", "counter",
     "Minor link errors detected (SymbolErrorCounter).", kPortLabels},
    {"infiniband_port_link_error_recovery_total", "counter",
     "Successful link error recoveries (LinkErrorRecoveryCounter).", kPortLabels},
    {"infiniband_port_link_downed_total", "counter",
     "Failed link error recoveries: link went down (LinkDownedCounter).", kPortLabels},
    {"infiniband_port_receive_errors_total", "counter",
     "Received packets containing an error (PortRcvErrors).", kPortLabels},
    {"infiniband_port_receive_remote_physical_errors_total", "counter",
     "Received packets marked with the EBP delimiter (PortRcvRemotePhysicalErrors).", kPortLabels},
    {"infiniband_port_receive_switch_relay_errors_total", "counter",
     "Received packets discarded because they could not be forwarded (PortRcvSwitchRelayErrors).",
     kPortLabels},
    {"infiniband_port_transmit_discards_total", "counter",
     "Outbound packets discarded because the port was down or congested (PortXmitDiscards).",
     kPortLabels},
    {"infiniband_port_transmit_constraint_errors_total", "counter",
     "Outbound packets not transmitted due to constraints (PortXmitConstraintErrors).",
     kPortLabels},
    {"infiniband_port_receive_constraint_errors_total", "counter",
     "Inbound packets discarded due to constraints (PortRcvConstraintErrors).", kPortLabels},
    {"infiniband_port_local_link_integrity_errors_total", "counter",
     "Times local physical errors exceeded the threshold (LocalLinkIntegrityErrors).", kPortLabels},
    {"infiniband_port_excessive_buffer_overrun_errors_total", "counter",
     "Times consecutive flow-control update periods had buffer overruns "
     "(ExcessiveBufferOverrunErrors).",
     kPortLabels},
    {"infiniband_port_vl15_dropped_total", "counter",
     "Incoming VL15 (subnet management) packets dropped (VL15Dropped).", kPortLabels},
    {"infiniband_port_qp1_dropped_total", "counter",
     "Incoming QP1 (general management) packets dropped (QP1Dropped).", kPortLabels},
    {"infiniband_port_local_physical_errors_total", "counter",
     "Received packets with a local physical error: ICRC, VCRC, FCCRC or a bad "
     "delimiter (PortRcvErrorDetails.PortLocalPhysicalErrors).",
     kPortLabels},
    {"infiniband_port_malformed_packet_errors_total", "counter",
     "Received packets that were malformed: bad LRH, VL or length "
     "(PortRcvErrorDetails.PortMalformedPacketErrors).",
     kPortLabels},
    {"infiniband_port_buffer_overrun_errors_total", "counter",
     "Received packets discarded for an input buffer overrun "
     "(PortRcvErrorDetails.PortBufferOverrunErrors).",
     kPortLabels},
    {"infiniband_port_dlid_mapping_errors_total", "counter",
     "Received packets whose DLID could not be mapped to an output port "
     "(PortRcvErrorDetails.PortDLIDMappingErrors).",
     kPortLabels},
    {"infiniband_port_vl_mapping_errors_total", "counter",
     "Received packets whose SL could not be mapped to a VL "
     "(PortRcvErrorDetails.PortVLMappingErrors).",
     kPortLabels},
    {"infiniband_port_looping_errors_total", "counter",
     "Received packets that would have left through the port they came in by "
     "(PortRcvErrorDetails.PortLoopingErrors).",
     kPortLabels},
    {"infiniband_port_inactive_discards_total", "counter",
     "Outbound packets discarded because the port was not active "
     "(PortXmitDiscardDetails.PortInactiveDiscards).",
     kPortLabels},
    {"infiniband_port_neighbor_mtu_discards_total", "counter",
     "Outbound packets discarded for exceeding the neighbor's MTU "
     "(PortXmitDiscardDetails.PortNeighborMTUDiscards).",
     kPortLabels},
    {"infiniband_port_sw_lifetime_limit_discards_total", "counter",
     "Outbound packets discarded by the switch lifetime limit "
     "(PortXmitDiscardDetails.PortSwLifetimeLimitDiscards).",
     kPortLabels},
    {"infiniband_port_sw_hoq_lifetime_limit_discards_total", "counter",
     "Outbound packets discarded by the head-of-queue lifetime limit "
     "(PortXmitDiscardDetails.PortSwHOQLifetimeLimitDiscards).",
     kPortLabels},
    {"infiniband_port_receive_fecn_packets_total", "counter",
     "Received packets marked with FECN: congestion on the path to this port "
     "(PortRcvConCtrl.PortPktRcvFECN).",
     kPortLabels},
    {"infiniband_port_receive_becn_packets_total", "counter",
     "Received packets marked with BECN: a destination reported congestion back "
     "(PortRcvConCtrl.PortPktRcvBECN).",
     kPortLabels},
    {"infiniband_port_transmit_congestion_time_total", "counter",
     "Time the port was in the congested state, in the device's congestion-control "
     "ticks (PortXmitConCtrl.PortXmitTimeCong).",
     kPortLabels},
};
static_assert(std::size(kCounterFamilies) == kCounterCount);

// In the order of mad/pma.h LaneCounter.
constexpr MetricFamily kLaneCounterFamilies[] = {
    {"infiniband_port_vl_transmit_wait_total", "counter",
     "Ticks during which the port had data to send on this VL but no flow-control credits "
     "(PortVLXmitWaitCounters.PortVLXmitWait).",
     kVlLabels},
    {"infiniband_port_sl_receive_fecn_packets_total", "counter",
     "Received packets of this SL marked with FECN (PortSLRcvFECN).", kSlLabels},
    {"infiniband_port_sl_receive_becn_packets_total", "counter",
     "Received packets of this SL marked with BECN (PortSLRcvBECN).", kSlLabels},
    {"infiniband_port_vl_transmit_congestion_time_total", "counter",
     "Time this VL was in the congested state, in congestion-control ticks "
     "(PortVLXmitTimeCong).",
     kVlLabels},
};
static_assert(std::size(kLaneCounterFamilies) == kLaneCounterCount);

constexpr std::string_view kPrefix = "infiniband_port_";
constexpr std::string_view kSuffix = "_total";

}  // namespace

const MetricFamily& counter_family(Counter c) {
  return kCounterFamilies[static_cast<std::size_t>(c)];
}

const MetricFamily& lane_counter_family(LaneCounter c) {
  return kLaneCounterFamilies[static_cast<std::size_t>(c)];
}

std::string_view counter_short_name(Counter c) {
  std::string_view name = counter_family(c).name;
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(kSuffix.size());
  return name;
}

}  // namespace ibfx
