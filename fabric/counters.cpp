#include "fabric/counters.h"

#include <iterator>

namespace ibfx {
namespace {

// Field widths and CounterSelect bits: IBA 1.3 Table 247 (PortCounters) and
// infiniband-diags' clear masks (errors 0x0FFF, data/packets 0xF000,
// CounterSelect2 bit 0 -> mask bit 16 for PortXmitWait).
constexpr CounterInfo kCounters[kCounterCount] = {
    {32, 16, 1},  // PortXmitWait
    {32, 12, 4},  // PortXmitData
    {32, 13, 4},  // PortRcvData
    {32, 14, 1},  // PortXmitPkts
    {32, 15, 1},  // PortRcvPkts
    {0, -1, 1},   // PortUnicastXmitPkts
    {0, -1, 1},   // PortUnicastRcvPkts
    {0, -1, 1},   // PortMulticastXmitPkts
    {0, -1, 1},   // PortMulticastRcvPkts
    {16, 0, 1},   // SymbolErrorCounter
    {8, 1, 1},    // LinkErrorRecoveryCounter
    {8, 2, 1},    // LinkDownedCounter
    {16, 3, 1},   // PortRcvErrors
    {16, 4, 1},   // PortRcvRemotePhysicalErrors
    {16, 5, 1},   // PortRcvSwitchRelayErrors
    {16, 6, 1},   // PortXmitDiscards
    {8, 7, 1},    // PortXmitConstraintErrors
    {8, 8, 1},    // PortRcvConstraintErrors
    {4, 9, 1},    // LocalLinkIntegrityErrors
    {4, 10, 1},   // ExcessiveBufferOverrunErrors
    {16, 11, 1},  // VL15Dropped
    {16, -1, 1},  // QP1Dropped
    // PortRcvErrorDetails (IBA 1.3 Table 249), 16-bit fields; cleared only by
    // a Set of that attribute, which this daemon never sends.
    {16, -1, 1},  // PortRcvErrorDetails.PortLocalPhysicalErrors
    {16, -1, 1},  // PortRcvErrorDetails.PortMalformedPacketErrors
    {16, -1, 1},  // PortRcvErrorDetails.PortBufferOverrunErrors
    {16, -1, 1},  // PortRcvErrorDetails.PortDLIDMappingErrors
    {16, -1, 1},  // PortRcvErrorDetails.PortVLMappingErrors
    {16, -1, 1},  // PortRcvErrorDetails.PortLoopingErrors
    // PortXmitDiscardDetails (IBA 1.3 Table 250), 16-bit fields.
    {16, -1, 1},  // PortXmitDiscardDetails.PortInactiveDiscards
    {16, -1, 1},  // PortXmitDiscardDetails.PortNeighborMTUDiscards
    {16, -1, 1},  // PortXmitDiscardDetails.PortSwLifetimeLimitDiscards
    {16, -1, 1},  // PortXmitDiscardDetails.PortSwHOQLifetimeLimitDiscards
    // PortRcvConCtrl and PortXmitConCtrl (IBA Annex A10), 32-bit fields.
    {32, -1, 1},  // PortRcvConCtrl.PortPktRcvFECN
    {32, -1, 1},  // PortRcvConCtrl.PortPktRcvBECN
    {32, -1, 1},  // PortXmitConCtrl.PortXmitTimeCong
};
static_assert(std::size(kCounters) == kCounterCount);

constexpr LaneCounterInfo kLaneCounters[kLaneCounterCount] = {
    {"vl", 16, 16},
    {"sl", 16, 32},
    {"sl", 16, 32},
    {"vl", 15, 32},
};
}  // namespace

const CounterInfo& counter_info(Counter c) { return kCounters[static_cast<std::size_t>(c)]; }

const LaneCounterInfo& lane_counter_info(LaneCounter c) {
  return kLaneCounters[static_cast<std::size_t>(c)];
}

}  // namespace ibfx
