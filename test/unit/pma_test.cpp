#include "mad/pma.h"

#include <infiniband/mad.h>

#include <catch2/catch.hpp>

using namespace ibfx;

TEST_CASE("ClassPortInfo capability bits decode as ibsim reports them", "[pma]") {
  PmaData d{};
  mad_set_field(d.data(), 0, IB_CPI_CAPMASK_F, 0x1300);  // ibsim switch
  const PmaCapabilities caps = decode_class_port_info(d);
  CHECK(caps.cap_mask == 0x1300);
  CHECK(caps.extended());
  CHECK(caps.xmit_wait());
  CHECK_FALSE(caps.additional_extended());
  CHECK(caps.needs_port_counters());

  mad_set_field(d.data(), 0, IB_CPI_CAPMASK2_F, pma_cap::kAddlPortCountersExt);
  const PmaCapabilities full = decode_class_port_info(d);
  CHECK(full.additional_extended());
  CHECK_FALSE(full.needs_port_counters());
}

TEST_CASE("PortCounters decode every field and skip PortXmitWait without the cap bit", "[pma]") {
  PmaData d{};
  mad_set_field(d.data(), 0, IB_PC_ERR_SYM_F, 0xFFFF);
  mad_set_field(d.data(), 0, IB_PC_LINK_DOWNED_F, 3);
  mad_set_field(d.data(), 0, IB_PC_ERR_LOCALINTEG_F, 0xF);
  mad_set_field(d.data(), 0, IB_PC_VL15_DROPPED_F, 9);
  mad_set_field(d.data(), 0, IB_PC_XMT_BYTES_F, 0xFFFFFFFF);
  mad_set_field(d.data(), 0, IB_PC_XMT_WAIT_F, 1234);

  PmaCapabilities no_wait;
  no_wait.cap_mask = pma_cap::kExtWidth;
  CounterReading r;
  decode_port_counters(d, no_wait, r);
  CHECK(r.value[static_cast<std::size_t>(Counter::kSymbolErrors)] == 0xFFFF);
  CHECK(r.bits[static_cast<std::size_t>(Counter::kSymbolErrors)] == 16);
  CHECK(r.value[static_cast<std::size_t>(Counter::kLinkDowned)] == 3);
  CHECK(r.bits[static_cast<std::size_t>(Counter::kLinkDowned)] == 8);
  CHECK(r.value[static_cast<std::size_t>(Counter::kLocalLinkIntegrityErrors)] == 15);
  CHECK(r.bits[static_cast<std::size_t>(Counter::kLocalLinkIntegrityErrors)] == 4);
  CHECK(r.value[static_cast<std::size_t>(Counter::kVl15Dropped)] == 9);
  CHECK(r.value[static_cast<std::size_t>(Counter::kTransmitDataBytes)] == 0xFFFFFFFF);
  CHECK_FALSE(r.has(Counter::kTransmitWait));
  CHECK_FALSE(r.has(Counter::kQp1Dropped));

  PmaCapabilities with_wait;
  with_wait.cap_mask = pma_cap::kXmitWait | pma_cap::kQp1Dropped;
  CounterReading r2;
  decode_port_counters(d, with_wait, r2);
  CHECK(r2.value[static_cast<std::size_t>(Counter::kTransmitWait)] == 1234);
  CHECK(r2.bits[static_cast<std::size_t>(Counter::kTransmitWait)] == 32);
  CHECK(r2.has(Counter::kQp1Dropped));
}

TEST_CASE("PortCountersExtended decodes 64-bit XmitWait only with CapabilityMask2", "[pma]") {
  PmaData d{};
  mad_set_field64(d.data(), 0, IB_PC_EXT_XMT_BYTES_F, 0x123456789ABCull);
  mad_set_field64(d.data(), 0, IB_PC_EXT_XMT_UPKTS_F, 77);
  mad_set_field64(d.data(), 0, IB_PC_EXT_XMT_WAIT_F, 0x1'0000'0005ull);
  mad_set_field64(d.data(), 0, IB_PC_EXT_ERR_SYM_F, 70000);

  PmaCapabilities basic;
  basic.cap_mask = pma_cap::kExtWidthNoIetf;
  CounterReading r;
  decode_port_counters_ext(d, basic, r);
  CHECK(r.value[static_cast<std::size_t>(Counter::kTransmitDataBytes)] == 0x123456789ABCull);
  CHECK(r.bits[static_cast<std::size_t>(Counter::kTransmitDataBytes)] == 64);
  CHECK_FALSE(r.has(Counter::kUnicastTransmitPackets));  // NoIETF: no uni/multicast
  CHECK_FALSE(r.has(Counter::kTransmitWait));

  PmaCapabilities full;
  full.cap_mask = pma_cap::kExtWidth | pma_cap::kXmitWait;
  full.cap_mask2 = pma_cap::kAddlPortCountersExt;
  CounterReading r2;
  decode_port_counters_ext(d, full, r2);
  CHECK(r2.value[static_cast<std::size_t>(Counter::kUnicastTransmitPackets)] == 77);
  CHECK(r2.value[static_cast<std::size_t>(Counter::kTransmitWait)] == 0x1'0000'0005ull);
  CHECK(r2.bits[static_cast<std::size_t>(Counter::kTransmitWait)] == 64);
  CHECK(r2.value[static_cast<std::size_t>(Counter::kSymbolErrors)] == 70000);
}

TEST_CASE("Clear request selects exactly the requested counters", "[pma]") {
  const PmaData d = port_counters_clear_request(7, (1u << 0) | (1u << 16));
  auto* p = const_cast<std::uint8_t*>(d.data());
  CHECK(mad_get_field(p, 0, IB_PC_PORT_SELECT_F) == 7);
  CHECK(mad_get_field(p, 0, IB_PC_COUNTER_SELECT_F) == 1);
  CHECK(mad_get_field(p, 0, IB_PC_COUNTER_SELECT2_F) == 1);
  CHECK(decoded_port_select(port_counters_request(42)) == 42);
}

TEST_CASE("Data counters are exported in bytes (4-octet words x 4)", "[pma]") {
  CHECK(counter_info(Counter::kTransmitDataBytes).scale == 4);
  CHECK(counter_info(Counter::kReceiveDataBytes).scale == 4);
  CHECK(counter_info(Counter::kTransmitPackets).scale == 1);
  CHECK(counter_info(Counter::kTransmitWait).scale == 1);
}

namespace {
// Encodes `value` into `field` with libibmad's own field table, as a PMA
// response carries it.
void encode(PmaData& d, MAD_FIELDS field, std::uint32_t value) {
  mad_encode_field(d.data(), field, &value);
}
std::uint64_t val(const CounterReading& r, Counter c) {
  return r.value[static_cast<std::size_t>(c)];
}
std::uint8_t width(const CounterReading& r, Counter c) {
  return r.bits[static_cast<std::size_t>(c)];
}
}  // namespace

TEST_CASE("PortRcvErrorDetails and PortXmitDiscardDetails decode every 16-bit field", "[pma]") {
  struct Case {
    OptionalAttr attr;
    MAD_FIELDS field;
    Counter counter;
    std::uint32_t value;
  };
  const Case cases[] = {
      {OptionalAttr::kRcvErrorDetails, IB_PC_RCV_LOCAL_PHY_ERR_F, Counter::kPortLocalPhysicalErrors,
       0xFFFF},
      {OptionalAttr::kRcvErrorDetails, IB_PC_RCV_MALFORMED_PKT_ERR_F,
       Counter::kPortMalformedPacketErrors, 2},
      {OptionalAttr::kRcvErrorDetails, IB_PC_RCV_BUF_OVR_ERR_F, Counter::kPortBufferOverrunErrors,
       3},
      {OptionalAttr::kRcvErrorDetails, IB_PC_RCV_DLID_MAP_ERR_F, Counter::kPortDlidMappingErrors,
       4},
      {OptionalAttr::kRcvErrorDetails, IB_PC_RCV_VL_MAP_ERR_F, Counter::kPortVlMappingErrors, 5},
      {OptionalAttr::kRcvErrorDetails, IB_PC_RCV_LOOPING_ERR_F, Counter::kPortLoopingErrors, 6},
      {OptionalAttr::kXmitDiscardDetails, IB_PC_XMT_INACT_DISC_F, Counter::kPortInactiveDiscards,
       7},
      {OptionalAttr::kXmitDiscardDetails, IB_PC_XMT_NEIGH_MTU_DISC_F,
       Counter::kPortNeighborMtuDiscards, 8},
      {OptionalAttr::kXmitDiscardDetails, IB_PC_XMT_SW_LIFE_DISC_F,
       Counter::kPortSwLifetimeLimitDiscards, 9},
      {OptionalAttr::kXmitDiscardDetails, IB_PC_XMT_SW_HOL_DISC_F,
       Counter::kPortSwHoqLifetimeLimitDiscards, 0xFFFF},
  };
  for (const OptionalAttr attr :
       {OptionalAttr::kRcvErrorDetails, OptionalAttr::kXmitDiscardDetails}) {
    PmaData d{};
    for (const Case& c : cases) {
      if (c.attr == attr) encode(d, c.field, c.value);
    }
    CounterReading r;
    LaneReading lanes;
    decode_optional_attr(attr, d, r, lanes);
    for (const Case& c : cases) {
      INFO("field " << c.field);
      // Exactly the attribute's own fields, each 16 bits wide.
      CHECK(val(r, c.counter) == (c.attr == attr ? c.value : 0));
      CHECK(width(r, c.counter) == (c.attr == attr ? 16 : 0));
    }
    CHECK_FALSE(r.has(Counter::kSymbolErrors));  // no PortCounters field
    for (std::size_t c = 0; c < kLaneCounterCount; ++c) CHECK(lanes.bits[c] == 0);
  }
}

TEST_CASE("PortVLXmitWaitCounters decode 16 VLs of 16 bits", "[pma]") {
  PmaData d{};
  for (int vl = 0; vl < 16; ++vl) {
    encode(d, static_cast<MAD_FIELDS>(IB_PC_PORT_VL_XMIT_WAIT0_F + vl),
           static_cast<std::uint32_t>(vl == 15 ? 0xFFFF : 100 * vl + 1));
  }
  CounterReading r;
  LaneReading lanes;
  decode_optional_attr(OptionalAttr::kVlXmitWait, d, r, lanes);
  const auto vlw = static_cast<std::size_t>(LaneCounter::kVlXmitWait);
  CHECK(lanes.bits[vlw] == 16);
  CHECK(lanes.value[vlw][0] == 1);
  CHECK(lanes.value[vlw][7] == 701);
  CHECK(lanes.value[vlw][15] == 0xFFFF);
  for (std::size_t c = 0; c < kCounterCount; ++c) CHECK(r.bits[c] == 0);
  CHECK(lane_counter_info(LaneCounter::kVlXmitWait).label == "vl");
}

TEST_CASE("Congestion-control attributes decode with libibmad's field tables", "[pma]") {
  CounterReading r;
  LaneReading lanes;
  PmaData rcv{};
  encode(rcv, IB_PC_RCV_CON_CTRL_PKT_RCV_FECN_F, 0xFFFFFFFF);
  encode(rcv, IB_PC_RCV_CON_CTRL_PKT_RCV_BECN_F, 77);
  decode_optional_attr(OptionalAttr::kRcvConCtrl, rcv, r, lanes);
  CHECK(val(r, Counter::kPortPktRcvFecn) == 0xFFFFFFFF);
  CHECK(width(r, Counter::kPortPktRcvFecn) == 32);
  CHECK(val(r, Counter::kPortPktRcvBecn) == 77);

  PmaData xmit{};
  encode(xmit, IB_PC_XMIT_CON_CTRL_TIME_CONG_F, 123456);
  decode_optional_attr(OptionalAttr::kXmitConCtrl, xmit, r, lanes);
  CHECK(val(r, Counter::kPortXmitTimeCong) == 123456);
  CHECK(width(r, Counter::kPortXmitTimeCong) == 32);

  PmaData fecn{};
  PmaData becn{};
  PmaData cong{};
  for (int i = 0; i < 16; ++i) {
    encode(fecn, static_cast<MAD_FIELDS>(IB_PC_SL_RCV_FECN0_F + i),
           static_cast<std::uint32_t>(1000 + i));
    encode(becn, static_cast<MAD_FIELDS>(IB_PC_SL_RCV_BECN0_F + i),
           static_cast<std::uint32_t>(2000 + i));
    if (i < 15) {
      encode(cong, static_cast<MAD_FIELDS>(IB_PC_VL_XMIT_TIME_CONG0_F + i),
             static_cast<std::uint32_t>(i == 14 ? 0xFFFFFFFF : 3000 + i));
    }
  }
  decode_optional_attr(OptionalAttr::kSlRcvFecn, fecn, r, lanes);
  decode_optional_attr(OptionalAttr::kSlRcvBecn, becn, r, lanes);
  decode_optional_attr(OptionalAttr::kVlXmitTimeCong, cong, r, lanes);
  const auto f = static_cast<std::size_t>(LaneCounter::kSlRcvFecn);
  const auto b = static_cast<std::size_t>(LaneCounter::kSlRcvBecn);
  const auto t = static_cast<std::size_t>(LaneCounter::kVlXmitTimeCong);
  CHECK(lanes.bits[f] == 32);
  CHECK(lanes.bits[b] == 32);
  CHECK(lanes.bits[t] == 32);
  for (std::size_t i = 0; i < 16; ++i) {
    CHECK(lanes.value[f][i] == 1000 + i);
    CHECK(lanes.value[b][i] == 2000 + i);
  }
  CHECK(lanes.value[t][0] == 3000);
  CHECK(lanes.value[t][14] == 0xFFFFFFFF);
  CHECK(lanes.value[t][15] == 0);  // PortVLXmitTimeCong has no VL15
  CHECK(lane_counter_info(LaneCounter::kSlRcvFecn).label == "sl");
}

TEST_CASE("Every optional attribute names its IBA attribute ID and a group", "[pma]") {
  CHECK(optional_attr_info(OptionalAttr::kRcvErrorDetails).attr_id == 0x15);
  CHECK(optional_attr_info(OptionalAttr::kXmitDiscardDetails).attr_id == 0x16);
  CHECK(optional_attr_info(OptionalAttr::kVlXmitWait).attr_id == 0x1C);
  CHECK(optional_attr_info(OptionalAttr::kRcvConCtrl).group == CounterGroup::kCongestionControl);
  CHECK(optional_attr_info(OptionalAttr::kVlXmitTimeCong).attr_id == IB_GSI_PORT_VL_XMIT_TIME_CONG);
  // The request selects the port where libibmad's tables put PortSelect.
  const PmaData req = optional_attr_request(7);
  CHECK(mad_get_field(const_cast<std::uint8_t*>(req.data()), 0, IB_PC_PORT_SELECT_F) == 7);
  // The new per-port counters are never cleared by PortCounters.
  for (std::size_t c = static_cast<std::size_t>(kFirstOptionalCounter); c < kCounterCount; ++c) {
    CHECK(counter_info(c).select_bit == -1);
  }
}
