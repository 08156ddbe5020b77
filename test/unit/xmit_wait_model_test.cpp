#include "analysis/xmit_wait_model.h"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <string>

#include "analysis/scores.h"
#include "config/config.h"

namespace {

ibfx::FabricNode node(std::uint32_t vendor, std::uint32_t device, std::uint64_t guid = 0x1) {
  ibfx::FabricNode n;
  n.guid = guid;
  n.type = ibfx::NodeType::kSwitch;
  n.vendor_id = vendor;
  n.device_id = device;
  return n;
}

// width: LinkWidthActive bit (2 = 4x, 1 = 1x); ext: LinkSpeedExtActive (4 = HDR, 2 = EDR).
ibfx::FabricPort port(std::uint8_t width, std::uint8_t ext, std::uint8_t speed = 0) {
  ibfx::FabricPort p;
  p.number = 1;
  p.state = 4;
  p.phys_state = 5;
  p.width_active = width;
  p.speed_ext_active = ext;
  p.speed_active = speed;
  return p;
}

constexpr std::uint32_t kNvidia = 0x0002c9;

std::string parse_error(const std::string& yaml) {
  try {
    ibfx::parse_score_config(YAML::Load(yaml)["scores"], "s.yaml");
  } catch (const ibfx::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("IBTA data rates per lane and the rate ibstat prints", "[xmit_wait]") {
  CHECK(ibfx::link_data_rate_bytes(port(2, 4)) == Approx(25e9));  // 4x HDR: 200 Gb/s
  CHECK(ibfx::link_rate_gbps(port(2, 4)) == Approx(200));
  CHECK(ibfx::link_data_rate_bytes(port(2, 8)) == Approx(50e9));    // 4x NDR
  CHECK(ibfx::link_data_rate_bytes(port(2, 16)) == Approx(100e9));  // 4x XDR
  CHECK(ibfx::link_data_rate_bytes(port(2, 2)) == Approx(12.5e9));  // 4x EDR
  CHECK(ibfx::link_lane_gbps(port(2, 1)) == Approx(13.64));         // FDR
  CHECK(ibfx::link_rate_gbps(port(2, 1)) == Approx(56));
  CHECK(ibfx::link_data_rate_bytes(port(2, 0, 4)) == Approx(4e9));  // 4x QDR: 32 Gb/s of data
  CHECK(ibfx::link_rate_gbps(port(2, 0, 4)) == Approx(40));
  CHECK(ibfx::link_lane_gbps(port(2, 0, 1)) == Approx(2));          // SDR
  CHECK(ibfx::link_lane_gbps(port(2, 0, 2)) == Approx(4));          // DDR
  CHECK(ibfx::link_data_rate_bytes(port(1, 4)) == Approx(6.25e9));  // 1x HDR
  CHECK(ibfx::link_data_rate_bytes(port(2, 0, 0)) == 0);
}

TEST_CASE("PortXmitWait unit per device generation", "[xmit_wait]") {
  const ibfx::XmitWaitConfig config;
  const ibfx::XmitWaitModel model(config);

  SECTION("Quantum generations: 8 bytes per port whatever the width") {
    for (std::uint32_t dev : {0xd2f0u, 0xd2f2u, 0xd2f4u}) {
      const auto u4 = model.resolve(node(kNvidia, dev), port(2, 4), -1);
      CHECK(u4.model == "quantum");
      CHECK(u4.source == "device_table");
      CHECK(u4.bytes_per_count == 8);
      CHECK(u4.seconds == Approx(8 / 25e9));
      const auto u1 = model.resolve(node(kNvidia, dev), port(1, 4), -1);
      CHECK(u1.bytes_per_count == 8);  // not scaled by the width
      CHECK(u1.seconds == Approx(8 / 6.25e9));
    }
    CHECK(ibfx::known_xmit_wait_device(kNvidia, 0xd2f2)->product == "Quantum-2");
  }
  SECTION("a port stalled a quarter of the time reads W = 0.25, not 1.0") {
    // 4x HDR Quantum port stalled 2.5 s of 10 s: it lost 2.5 x 25e9 bytes,
    // counted in units of 8 bytes.
    const double counts = 2.5 * 25e9 / 8;
    const auto u = model.resolve(node(kNvidia, 0xd2f0), port(2, 4), -1);
    CHECK(counts * u.seconds / 10 == Approx(0.25));
  }
  SECTION("Switch-IB, Switch-IB 2, SwitchX: 32 bytes per lane") {
    for (std::uint32_t dev : {0xcb20u, 0xcf08u, 0xc738u, 0xc73bu}) {
      const auto u = model.resolve(node(kNvidia, dev), port(2, 2), -1);
      CHECK(u.model == "switch-ib");
      CHECK(u.bytes_per_count == 128);
      CHECK(u.seconds == Approx(128 / 12.5e9));  // = 32 bytes at one lane's 25 Gb/s
    }
  }
  SECTION("unknown devices: IBA, (Tick + 1) bytes per lane, Tick 7 assumed") {
    const auto u = model.resolve(node(0x1234, 0xd2f0), port(2, 4), -1);  // another vendor
    CHECK(u.model == "iba");
    CHECK(u.source == "iba_default");
    CHECK(u.bytes_per_count == 32);
    CHECK(u.seconds == Approx(8 * 8 / 50e9));  // 8 bytes at one lane's 50 Gb/s
  }
  SECTION("the device's PortSamplesControl.Tick replaces the assumed one") {
    CHECK(model.resolve(node(kNvidia, 0xd2f0), port(2, 4), 3).bytes_per_count == 4);
    CHECK(model.resolve(node(kNvidia, 0xcb20), port(2, 4), 7).bytes_per_count == 32);
    CHECK(model.resolve(node(0, 0), port(2, 4), 0).bytes_per_count == 4);
  }
  SECTION("no link speed: unknown") {
    CHECK(model.resolve(node(kNvidia, 0xd2f0), port(2, 0), -1).seconds == 0);
  }
}

TEST_CASE("PortXmitWait unit overrides: GUID, device ID, tick seconds", "[xmit_wait]") {
  const ibfx::ScoreConfig c = ibfx::parse_score_config(YAML::Load(R"(scores:
  tick_multiplier: 32
  tick_seconds_by_speed: {EDR: 3e-9}
  xmit_wait_by_device_id:
    0xd2f0: switch-ib
    54002: {model: quantum, bytes: 16}
  xmit_wait_by_guid:
    0xabc: {model: iba, bytes: 2}
)")["scores"],
                                                       "s.yaml");
  const ibfx::XmitWaitModel model(c.xmit_wait);
  auto u = model.resolve(node(kNvidia, 0xd2f0, 0xabc), port(2, 4), 7);
  CHECK(u.source == "guid");
  CHECK(u.bytes_per_count == 8);  // 2 per lane, the device's Tick does not apply
  u = model.resolve(node(kNvidia, 0xd2f0), port(2, 4), -1);
  CHECK(u.source == "device_id");
  CHECK(u.model == "switch-ib");
  CHECK(u.bytes_per_count == 128);
  CHECK(model.resolve(node(kNvidia, 0xd2f0), port(2, 4), 7).bytes_per_count == 32);
  CHECK(model.resolve(node(kNvidia, 0xd2f2), port(2, 4), 7).bytes_per_count == 16);
  u = model.resolve(node(kNvidia, 0xcb20), port(2, 2), -1);  // EDR: tick_seconds_by_speed
  CHECK(u.source == "tick_seconds");
  CHECK(u.seconds == Approx(3e-9));
  u = model.resolve(node(0, 0), port(2, 4), -1);  // tick_multiplier: Tick 31 for unknowns
  CHECK(u.bytes_per_count == 128);
  CHECK(model.resolve(node(kNvidia, 0xd2f4), port(2, 4), -1).source == "device_table");

  CHECK(parse_error("scores:\n  xmit_wait_by_device_id:\n    0xd2f0: fast\n")
            .starts_with("s.yaml:3: scores.xmit_wait_by_device_id: unknown PortXmitWait model "
                         "\"fast\""));
  CHECK(parse_error("scores:\n  xmit_wait_by_device_id:\n    0x1d2f0: quantum\n") ==
        "s.yaml:3: scores.xmit_wait_by_device_id: device ID 0x1d2f0 above 0xffff");
  CHECK(parse_error("scores:\n  xmit_wait_by_guid:\n    0x1: {bytes: 8}\n") ==
        "s.yaml:3: scores.xmit_wait_by_guid: missing model (quantum, switch-ib or iba)");
  CHECK(parse_error("scores:\n  xmit_wait_by_guid:\n    0x1: {model: iba, byte: 8}\n")
            .starts_with("s.yaml:3: scores.xmit_wait_by_guid: unknown key \"byte\""));
  CHECK(parse_error("scores:\n  xmit_wait_by_guid:\n    0x1: {model: iba, bytes: 0}\n")
            .starts_with("s.yaml:3: scores.xmit_wait_by_guid: 0 is out of range"));
  CHECK(parse_error("scores:\n  stall_threshold: 2\n")
            .starts_with("s.yaml:2: scores.stall_threshold: 2 is out of range"));
}
