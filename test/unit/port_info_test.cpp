// PortInfo (IBA 14.2.5.6) as discovery reads it: the raw bytes libibnetdisc
// keeps, here encoded by libibmad's own field tables (mad_set_field), read
// by port_from_port_info(), the decoder discovery uses, and carried by the
// fabric codec that brings a discovery back from the MAD worker.
#include <infiniband/mad.h>

#include <array>
#include <catch2/catch.hpp>

#include "discovery/discovery.h"
#include "discovery/fabric_codec.h"
#include "fabric/fabric.h"
#include "test/support/fake_fabric.h"

namespace {

using ibfx::FabricPort;

struct PortInfo {
  std::array<std::uint8_t, IB_SMP_DATA_SIZE> bytes{};
  PortInfo() {
    set(IB_PORT_STATE_F, 4);       // Active
    set(IB_PORT_PHYS_STATE_F, 5);  // LinkUp
  }
  PortInfo& set(MAD_FIELDS field, unsigned value) {
    mad_set_field(bytes.data(), 0, field, value);
    return *this;
  }
  FabricPort port() const { return ibfx::port_from_port_info(bytes.data(), true); }
};

}  // namespace

TEST_CASE("port_from_port_info reads PortInfo:LMC as libibmad encodes it", "[port_info]") {
  CHECK(PortInfo().port().lmc == 0);
  CHECK(PortInfo().port().lid_count() == 1);
  for (unsigned lmc = 0; lmc <= 7; ++lmc) {
    INFO("LMC " << lmc);
    const FabricPort p = PortInfo().set(IB_PORT_LMC_F, lmc).port();
    CHECK(p.lmc == lmc);
    CHECK(p.lid_count() == 1u << lmc);
    CHECK(p.state == 4);  // its neighbours in the attribute are untouched
    CHECK(p.phys_state == 5);
  }
  // The fields around it (MasterSMSL, LMC and MKeyProtectBits share bytes
  // with LIDs) do not leak into it.
  const FabricPort around = PortInfo()
                                .set(IB_PORT_LID_F, 0xffff)
                                .set(IB_PORT_SMLID_F, 0xffff)
                                .set(IB_PORT_MKEY_PROT_BITS_F, 3)
                                .set(IB_PORT_SMSL_F, 15)
                                .port();
  CHECK(around.lmc == 0);
}

TEST_CASE("port_from_port_info reads PortInfo:LinkRoundTripLatency, all 24 bits", "[port_info]") {
  CHECK(PortInfo().port().link_round_trip_ns == 0);  // what ibsim answers: not known
  CHECK(PortInfo().set(IB_PORT_LINK_ROUND_TRIP_F, 150).port().link_round_trip_ns == 150);
  CHECK(PortInfo().set(IB_PORT_LINK_ROUND_TRIP_F, 0x123456).port().link_round_trip_ns == 0x123456);
  CHECK(PortInfo().set(IB_PORT_LINK_ROUND_TRIP_F, 0xffffff).port().link_round_trip_ns == 0xffffff);
  // Its neighbour fields do not leak into it.
  const FabricPort around = PortInfo()
                                .set(IB_PORT_OVERRUN_ERR_F, 15)
                                .set(IB_PORT_LOCAL_PHYS_ERR_F, 15)
                                .set(IB_PORT_MAX_CREDIT_HINT_F, 0xffff)
                                .port();
  CHECK(around.link_round_trip_ns == 0);
}

TEST_CASE("encode_fabric carries the LMC, and decode_fabric refuses one beyond 3 bits",
          "[port_info]") {
  ibfx::Fabric f = ibfx::test::star_fabric(2);
  f.nodes[1].ports[0].lmc = 2;                       // an HCA at 4 LIDs
  for (FabricPort& p : f.nodes[0].ports) p.lmc = 1;  // the switch's port 0 LMC
  f.index();
  ibfx::Fabric back;
  std::string error;
  REQUIRE(ibfx::decode_fabric(ibfx::encode_fabric(f), back, error));
  CHECK(back.nodes[1].ports[0].lmc == 2);
  CHECK(back.nodes[1].ports[0].lid_count() == 4);
  CHECK(back.nodes[2].ports[0].lmc == 0);
  for (const FabricPort& p : back.nodes[0].ports) CHECK(p.lmc == 1);

  f.nodes[2].ports[0].lmc = 8;
  ibfx::Fabric out;
  CHECK_FALSE(ibfx::decode_fabric(ibfx::encode_fabric(f), out, error));
  CHECK(error.find("LMC") != std::string::npos);
}

TEST_CASE("encode_fabric carries the link round trip, and decode_fabric refuses one beyond 24 bits",
          "[port_info]") {
  ibfx::Fabric f = ibfx::test::star_fabric(2);
  f.nodes[1].ports[0].link_round_trip_ns = 0xffffff;
  f.nodes[0].ports[1].link_round_trip_ns = 95;
  f.index();
  ibfx::Fabric back;
  std::string error;
  REQUIRE(ibfx::decode_fabric(ibfx::encode_fabric(f), back, error));
  CHECK(back.nodes[1].ports[0].link_round_trip_ns == 0xffffff);
  CHECK(back.nodes[0].ports[1].link_round_trip_ns == 95);
  CHECK(back.nodes[2].ports[0].link_round_trip_ns == 0);

  f.nodes[2].ports[0].link_round_trip_ns = 0x1000000;
  ibfx::Fabric out;
  CHECK_FALSE(ibfx::decode_fabric(ibfx::encode_fabric(f), out, error));
  CHECK(error.find("round trip") != std::string::npos);
}
