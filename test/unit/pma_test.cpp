#include "collectors/pma.h"

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

TEST_CASE("PortCounters decode every field and skip PortXmitWait without the cap bit",
          "[pma]") {
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
