// The Fabric a discovery child sends back (discovery/fabric_codec.h): a
// round trip is exact, and bytes that are not a valid encoding are refused
// with a reason, never a crash.
#include "discovery/fabric_codec.h"

#include <catch2/catch.hpp>
#include <random>

#include "test/support/fake_fabric.h"

using namespace ibfx;

namespace {

void require_same(const Fabric& a, const Fabric& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  CHECK(a.discovered_at == b.discovered_at);
  CHECK(a.discovery_seconds == b.discovery_seconds);
  CHECK(a.smp_timeouts == b.smp_timeouts);
  CHECK(a.smp_errors == b.smp_errors);
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const FabricNode& x = a.nodes[i];
    const FabricNode& y = b.nodes[i];
    INFO("node " << i);
    CHECK(x.guid == y.guid);
    CHECK(x.type == y.type);
    CHECK(x.description == y.description);
    CHECK(x.lid == y.lid);
    CHECK(x.vendor_id == y.vendor_id);
    CHECK(x.device_id == y.device_id);
    CHECK(x.num_ports == y.num_ports);
    CHECK(x.present == y.present);
    CHECK(x.runs_sm == y.runs_sm);
    REQUIRE(x.ports.size() == y.ports.size());
    for (std::size_t p = 0; p < x.ports.size(); ++p) {
      const FabricPort& u = x.ports[p];
      const FabricPort& v = y.ports[p];
      CHECK(u.number == v.number);
      CHECK(u.lid == v.lid);
      CHECK(u.lmc == v.lmc);
      CHECK(u.link_round_trip_ns == v.link_round_trip_ns);
      CHECK(u.state == v.state);
      CHECK(u.phys_state == v.phys_state);
      CHECK(u.width_active == v.width_active);
      CHECK(u.speed_active == v.speed_active);
      CHECK(u.speed_ext_active == v.speed_ext_active);
      CHECK(u.remote_node == v.remote_node);
      CHECK(u.remote_port == v.remote_port);
    }
  }
  CHECK(a.local_node == b.local_node);
  CHECK(a.sm_lid == b.sm_lid);
  CHECK(a.local_port_state == b.local_port_state);
  // The index is rebuilt, not trusted from the wire.
  for (const FabricNode& n : a.nodes) CHECK(b.find(n.guid) != nullptr);
}

Fabric sample_fabric() {
  Fabric f = test::star_fabric(3, 2);
  f.nodes[0].vendor_id = 0x02c9;
  f.nodes[0].device_id = 0xd2f0;
  f.nodes[1].description = std::string("gpu0 mlx5_0 \"quoted\"\n\xff", 23);
  f.nodes[2].present = false;
  f.nodes[3].type = NodeType::kRouter;
  f.nodes[1].runs_sm = true;
  f.local_node = f.nodes[1].guid;
  f.sm_lid = 0x1234;
  f.local_port_state = 2;  // Initialize
  f.nodes[1].ports[0].speed_ext_active = 4;
  f.nodes[1].ports[0].lmc = 3;
  f.nodes[1].ports[0].link_round_trip_ns = 0xabcdef;
  f.nodes[0].ports.back().remote_node = kNoNode;
  f.discovered_at = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)) +
                    std::chrono::microseconds(123456);
  f.discovery_seconds = 0.8125;
  f.smp_timeouts = 17;  // a partial discovery says so
  f.smp_errors = 2;
  f.index();
  return f;
}

}  // namespace

TEST_CASE("Fabric encoding: a round trip gives the same fabric", "[fabric_codec]") {
  const Fabric f = sample_fabric();
  Fabric back;
  std::string error;
  REQUIRE(decode_fabric(encode_fabric(f), back, error));
  CHECK(error.empty());
  require_same(f, back);

  Fabric empty_back;
  REQUIRE(decode_fabric(encode_fabric(Fabric{}), empty_back, error));
  CHECK(empty_back.nodes.empty());
}

TEST_CASE("Fabric encoding: every truncation is refused with a reason", "[fabric_codec]") {
  const std::string bytes = encode_fabric(sample_fabric());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    Fabric out;
    out.nodes.resize(1);  // must stay untouched on failure
    std::string error;
    INFO("length " << n);
    CHECK_FALSE(decode_fabric(std::string_view(bytes).substr(0, n), out, error));
    CHECK(error.rfind("malformed fabric: ", 0) == 0);
    CHECK(out.nodes.size() == 1);
  }
}

TEST_CASE("Fabric encoding: garbage is refused, never trusted", "[fabric_codec]") {
  const std::string good = encode_fabric(sample_fabric());
  std::string error;
  Fabric out;

  SECTION("trailing bytes") { CHECK_FALSE(decode_fabric(good + "x", out, error)); }
  SECTION("another format version") {
    std::string bad = good;
    bad[7] = '\x7f';
    CHECK_FALSE(decode_fabric(bad, out, error));
    CHECK(error.find("magic") != std::string::npos);
  }
  SECTION("a node count far beyond the data does not allocate it") {
    std::string bad = good;
    for (int i = 32; i < 36; ++i) bad[static_cast<std::size_t>(i)] = '\xff';
    CHECK_FALSE(decode_fabric(bad, out, error));
    CHECK(error.find("node count") != std::string::npos);
  }
  SECTION("a link to a node that does not exist") {
    Fabric f = sample_fabric();
    f.nodes[1].ports[0].remote_node = 99;
    CHECK_FALSE(decode_fabric(encode_fabric(f), out, error));
    CHECK(error.find("does not exist") != std::string::npos);
  }
  SECTION("a bad node type") {
    // guid (8 bytes) after the 36-byte header, then the type.
    std::string bad = good;
    bad[36 + 8] = 9;
    CHECK_FALSE(decode_fabric(bad, out, error));
    CHECK(error.find("node type") != std::string::npos);
  }
  SECTION("random bytes and random corruptions never crash") {
    std::mt19937 rng(42);
    for (int i = 0; i < 2000; ++i) {
      std::string bytes = good;
      if (i % 2 == 0) {
        bytes.resize(rng() % 200);
        for (char& c : bytes) c = static_cast<char>(rng());
        if (i % 4 == 0 && bytes.size() >= 8) bytes.replace(0, 8, good.substr(0, 8));
      } else {
        for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
      Fabric f;
      std::string e;
      if (decode_fabric(bytes, f, e)) {
        // Whatever is accepted is internally consistent.
        for (const FabricNode& n : f.nodes) {
          for (const FabricPort& p : n.ports) {
            CHECK(
                (p.remote_node == kNoNode ||
                 (p.remote_node >= 0 && static_cast<std::size_t>(p.remote_node) < f.nodes.size())));
          }
        }
      } else {
        CHECK_FALSE(e.empty());
      }
    }
  }
}
