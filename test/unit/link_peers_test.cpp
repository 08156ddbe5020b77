#include "links/link_peers.h"

#include <infiniband/mad.h>

#include <array>
#include <catch2/catch.hpp>
#include <memory>

#include "discovery/discovery.h"
#include "discovery/fabric_codec.h"
#include "links/link_health_tracker.h"
#include "test/support/fabric_builder.h"

namespace {

using ibfx::FabricPort;

// A PortInfo attribute (IBA 14.2.5.6) encoded by libibmad's own field
// tables, as libibnetdisc hands it to discovery: Active, LinkUp, the
// widths and speeds given.
struct PeerPortInfo {
  std::array<std::uint8_t, IB_SMP_DATA_SIZE> bytes{};
  PeerPortInfo(unsigned width_enabled, unsigned width_active, unsigned speed_enabled,
               unsigned speed_active, unsigned ext_enabled, unsigned ext_active) {
    set(IB_PORT_STATE_F, 4);
    set(IB_PORT_PHYS_STATE_F, 5);
    set(IB_PORT_LINK_WIDTH_ENABLED_F, width_enabled);
    set(IB_PORT_LINK_WIDTH_SUPPORTED_F, 0x1f);
    set(IB_PORT_LINK_WIDTH_ACTIVE_F, width_active);
    set(IB_PORT_LINK_SPEED_SUPPORTED_F, 7);
    set(IB_PORT_LINK_SPEED_ENABLED_F, speed_enabled);
    set(IB_PORT_LINK_SPEED_ACTIVE_F, speed_active);
    set(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, 0x1f);
    set(IB_PORT_LINK_SPEED_EXT_ENABLED_F, ext_enabled);
    set(IB_PORT_LINK_SPEED_EXT_ACTIVE_F, ext_active);
  }
  void set(MAD_FIELDS field, unsigned value) { mad_set_field(bytes.data(), 0, field, value); }
  FabricPort port(bool extended = true) const {
    return ibfx::port_from_port_info(bytes.data(), extended);
  }
};

// IBA 14.2.5.6 encodings: LinkWidth 1=1x 2=4x 4=8x 8=12x 16=2x; LinkSpeed
// 1=SDR 2=DDR 4=QDR; LinkSpeedExt 1=FDR 2=EDR 4=HDR 8=NDR.
constexpr unsigned k1x = 1, k4x = 2, k12x = 8;
constexpr unsigned kSdrToQdr = 7, kQdr = 4;
constexpr unsigned kFdrToHdr = 7, kEdr = 2, kHdr = 4, kFdrToNdr = 15;

// A leaf, a spine and three HCAs on the leaf; every port's PortInfo as
// `hca` and `leaf` encode it (leaf port 1's cable: hca0).
struct Cables {
  ibfx::Fabric fabric;
  Cables(const PeerPortInfo& hca0, const PeerPortInfo& leaf1) {
    ibfx::test::FabricBuilder b;
    const int leaf = b.add_switch("leaf");
    for (int h = 0; h < 3; ++h) b.link(b.add_hca("host" + std::to_string(h) + " mlx5_0"), leaf);
    fabric = b.build();
    // Every port as ibsim reports its ports: 1x/4x, SDR..QDR, FDR..HDR
    // enabled, 4x HDR active.
    const PeerPortInfo plain(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToHdr, kHdr);
    for (ibfx::FabricNode& n : fabric.nodes) {
      for (FabricPort& p : n.ports) assign(p, plain.port());
    }
    assign(fabric.nodes[0].ports[0], leaf1.port());
    assign(fabric.nodes[1].ports[0], hca0.port());
  }
  static void assign(FabricPort& to, const FabricPort& info) {
    const FabricPort keep = to;
    to = info;
    to.number = keep.number;
    to.lid = keep.lid;
    to.remote_node = keep.remote_node;
    to.remote_port = keep.remote_port;
  }
  std::vector<ibfx::SlowerLink> slower() const {
    return ibfx::links_slower_than_they_should(fabric, nullptr);
  }
};

}  // namespace

TEST_CASE("port_from_port_info reads the enabled widths and speeds libibmad encodes", "[links]") {
  const PeerPortInfo info(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToNdr, kHdr);
  const FabricPort p = info.port();
  CHECK(p.state == 4);
  CHECK(p.phys_state == 5);
  CHECK(p.width_enabled == (k1x | k4x));
  CHECK(p.width_active == k4x);
  CHECK(p.speed_enabled == kSdrToQdr);
  CHECK(p.speed_active == kQdr);
  CHECK(p.speed_ext_enabled == kFdrToNdr);
  CHECK(p.speed_ext_active == kHdr);
  // Without IsExtendedSpeedsSupported the LinkSpeedExt fields mean nothing.
  const FabricPort plain = info.port(false);
  CHECK(plain.speed_ext_enabled == 0);
  CHECK(plain.speed_ext_active == 0);
  CHECK(plain.speed_enabled == kSdrToQdr);
}

TEST_CASE("link_enabled_best: the widest width and fastest speed both ends enable", "[links]") {
  FabricPort a = PeerPortInfo(k1x | k4x | k12x, k4x, kSdrToQdr, kQdr, kFdrToNdr, kHdr).port();
  FabricPort b = PeerPortInfo(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToHdr, kHdr).port();
  FabricPort best = ibfx::link_enabled_best(a, b);
  CHECK(best.width_active == k4x);       // 12x only at a
  CHECK(best.speed_ext_active == kHdr);  // NDR only at a
  CHECK(ibfx::link_speed_name(best) == "HDR");
  // An end without extended speeds: the best of LinkSpeedEnabled.
  b.speed_ext_enabled = 0;
  best = ibfx::link_enabled_best(a, b);
  CHECK(best.speed_ext_active == 0);
  CHECK(best.speed_active == kQdr);
  // An end that does not say (0): nothing is known.
  b.width_enabled = 0;
  CHECK(ibfx::link_enabled_best(a, b).width_active == 0);
}

TEST_CASE("A link below the width both ends enable is degraded, whatever its peers do", "[links]") {
  // Every HCA cable at 1x (so no peer is faster), but hca0 and its leaf
  // port enable 4x: only that cable trained below what its ends enable.
  Cables c(PeerPortInfo(k1x | k4x, k1x, kSdrToQdr, kQdr, kFdrToHdr, kHdr),
           PeerPortInfo(k1x | k4x, k1x, kSdrToQdr, kQdr, kFdrToHdr, kHdr));
  for (ibfx::FabricNode& n : c.fabric.nodes) {
    for (FabricPort& p : n.ports) {
      p.width_active = k1x;
      if (&p != &c.fabric.nodes[0].ports[0] && &p != &c.fabric.nodes[1].ports[0]) {
        p.width_enabled = k1x;
      }
    }
  }
  const auto slower = c.slower();
  REQUIRE(slower.size() == 2);  // both ends of hca0's cable
  for (const ibfx::SlowerLink& s : slower) {
    CHECK(s.below_enabled);
    CHECK_FALSE(s.below_peers);
    CHECK(ibfx::link_width_name(s.enabled.width_active) == "4x");
    CHECK(s.enabled_rate_gbps == Approx(200));
    CHECK(s.rate_gbps == Approx(50));
  }
  CHECK(slower[0].node == 0);
  CHECK(slower[1].node == 1);
}

TEST_CASE("A link below the speed both ends enable is degraded, one end's limit is not",
          "[links]") {
  SECTION("both enable HDR, trained EDR") {
    Cables c(PeerPortInfo(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToHdr, kEdr),
             PeerPortInfo(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToHdr, kEdr));
    const auto slower = c.slower();
    REQUIRE(slower.size() == 2);
    CHECK(slower[0].below_enabled);
    CHECK(slower[0].below_peers);  // 100 Gb/s among 200 Gb/s peers
    CHECK(ibfx::link_speed_name(slower[0].enabled) == "HDR");
    const std::string why = ibfx::degraded_reason(true, "4x", "HDR", true, slower[0].rate_gbps,
                                                  slower[0].peers_rate_gbps, "4x", "EDR");
    CHECK(why == "4x EDR, below the 4x HDR both ends enable; 100 Gb/s, below its peers' 200 Gb/s");
  }
  SECTION("the HCA enables EDR at most: EDR is all the cable can do") {
    Cables c(PeerPortInfo(k1x | k4x, k4x, kSdrToQdr, kQdr, 3, kEdr),
             PeerPortInfo(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToHdr, kEdr));
    const auto slower = c.slower();
    REQUIRE(slower.size() == 2);  // still below its HDR peers
    CHECK_FALSE(slower[0].below_enabled);
    CHECK(slower[0].below_peers);
  }
  SECTION("the baseline: every port as ibsim reports it, at what both enable") {
    const PeerPortInfo plain(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToHdr, kHdr);
    CHECK(Cables(plain, plain).slower().empty());
  }
}

TEST_CASE("LinkHealthTracker: degraded below what both ends enable, and says so", "[links]") {
  // One HCA only, so that there are no peers to be slower than.
  ibfx::test::FabricBuilder fb;
  const int sw = fb.add_switch("sw");
  fb.link(fb.add_hca("host0 mlx5_0"), sw);
  ibfx::Fabric f = fb.build();
  for (ibfx::FabricNode& n : f.nodes) {
    for (FabricPort& p : n.ports) {
      const FabricPort info = PeerPortInfo(k1x | k4x, k1x, kSdrToQdr, kQdr, kFdrToHdr, kHdr).port();
      p.width_active = info.width_active;
      p.width_enabled = info.width_enabled;
      p.speed_enabled = info.speed_enabled;
      p.speed_ext_enabled = info.speed_ext_enabled;
    }
  }
  const auto fabric = std::make_shared<const ibfx::Fabric>(f);
  ibfx::CounterAccumulator acc;
  ibfx::LinkHealthTracker tracker;
  const std::vector<std::vector<bool>> read(fabric->nodes.size());
  const auto r = tracker.observe(fabric, nullptr, acc, read, 1000, {});
  REQUIRE(r->links.size() == 1);
  const ibfx::LinkReport& l = r->links[0];
  CHECK(l.condition == ibfx::LinkCondition::kDegraded);
  CHECK(l.below_enabled);
  CHECK_FALSE(l.below_peers);
  CHECK(ibfx::link_width_name(l.enabled.width_active) == "4x");
  CHECK(l.rate_gbps == Approx(50));
}

TEST_CASE("encode_fabric carries the enabled widths and speeds", "[links]") {
  Cables c(PeerPortInfo(k1x | k4x | k12x, k4x, kSdrToQdr, kQdr, kFdrToNdr, kHdr),
           PeerPortInfo(k1x | k4x, k4x, kSdrToQdr, kQdr, kFdrToHdr, kHdr));
  c.fabric.index();
  ibfx::Fabric back;
  std::string error;
  REQUIRE(ibfx::decode_fabric(ibfx::encode_fabric(c.fabric), back, error));
  const FabricPort& p = back.nodes[1].ports[0];
  CHECK(p.width_enabled == (k1x | k4x | k12x));
  CHECK(p.speed_enabled == kSdrToQdr);
  CHECK(p.speed_ext_enabled == kFdrToNdr);
}
