#include "analysis/topology.h"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "test/support/fabric_builder.h"

using ibfx::PortDirection;
using ibfx::Tier;
using ibfx::test::rail_fabric;
using ibfx::test::RailFabric;

namespace {

// Direction of the port of `node` cabled to `remote`.
PortDirection direction_to(const ibfx::Fabric& f, const ibfx::Topology& t, int node, int remote) {
  const auto& ports = f.nodes[static_cast<std::size_t>(node)].ports;
  for (std::size_t j = 0; j < ports.size(); ++j) {
    if (ports[j].remote_node == remote) return t.direction[static_cast<std::size_t>(node)][j];
  }
  FAIL("no link");
  return PortDirection::kNone;
}

Tier tier(const ibfx::Topology& t, int node) { return t.tier[static_cast<std::size_t>(node)]; }
int rail(const ibfx::Topology& t, int node) { return t.rail[static_cast<std::size_t>(node)]; }
int single(const ibfx::Topology& t, int node) {
  return t.single_rail[static_cast<std::size_t>(node)];
}

std::string topology_parse_error(const std::string& yaml) {
  try {
    const YAML::Node doc = YAML::Load(yaml);
    ibfx::parse_topology_config(doc["topology"], "test.yaml");
  } catch (const ibfx::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("tier and direction names", "[topology]") {
  CHECK(ibfx::tier_name(Tier::kHca) == "hca");
  CHECK(ibfx::tier_name(Tier::kCore) == "core");
  CHECK(ibfx::tier_name(Tier::kUnknown) == "unknown");
  CHECK(ibfx::parse_tier("spine") == Tier::kSpine);
  CHECK_FALSE(ibfx::parse_tier("Spine").has_value());
  CHECK(ibfx::direction_name(PortDirection::kHost) == "host");
}

TEST_CASE("2-rail 2-tier rail-optimized tree", "[topology]") {
  const RailFabric rf = rail_fabric(
      {.rails = 2, .leaves_per_rail = 2, .hosts_per_leaf = 3, .spines_per_rail = 2, .cores = 0});
  const ibfx::Topology t = ibfx::classify_topology(rf.fabric, {}, {});
  REQUIRE(t.tier.size() == rf.fabric.nodes.size());
  CHECK(t.count(Tier::kHca) == 12);
  CHECK(t.count(Tier::kLeaf) == 4);
  CHECK(t.count(Tier::kSpine) == 4);
  CHECK(t.count(Tier::kCore) == 0);
  CHECK(t.count(Tier::kUnknown) == 0);
  CHECK(t.miscabled.empty());
  for (int r = 0; r < 2; ++r) {
    for (int leaf : rf.leaf[static_cast<std::size_t>(r)]) {
      CHECK(rail(t, leaf) == r);
      CHECK(single(t, leaf) == r);
    }
    for (int spine : rf.spine[static_cast<std::size_t>(r)]) {
      CHECK(rail(t, spine) == ibfx::kNoRail);
      CHECK(single(t, spine) == r);
    }
    CHECK(rail(t, rf.hca[1][static_cast<std::size_t>(r)]) == r);
  }
  const int hca = rf.hca[0][1];
  const int leaf = rf.leaf[1][0];
  const int spine = rf.spine[1][0];
  CHECK(t.direction[static_cast<std::size_t>(hca)][0] == PortDirection::kHost);
  CHECK(direction_to(rf.fabric, t, leaf, hca) == PortDirection::kDown);
  CHECK(direction_to(rf.fabric, t, leaf, spine) == PortDirection::kUp);
  CHECK(direction_to(rf.fabric, t, spine, leaf) == PortDirection::kDown);
}

TEST_CASE("3-tier tree: cores above rail spines", "[topology]") {
  const RailFabric rf = rail_fabric(
      {.rails = 2, .leaves_per_rail = 2, .hosts_per_leaf = 2, .spines_per_rail = 2, .cores = 2});
  const ibfx::Topology t = ibfx::classify_topology(rf.fabric, {}, {});
  CHECK(t.count(Tier::kLeaf) == 4);
  CHECK(t.count(Tier::kSpine) == 4);
  CHECK(t.count(Tier::kCore) == 2);
  CHECK(t.count(Tier::kUnknown) == 0);
  for (int core : rf.core) {
    CHECK(tier(t, core) == Tier::kCore);
    CHECK(single(t, core) == ibfx::kNoRail);  // cores see both rails
  }
  CHECK(single(t, rf.spine[1][1]) == 1);
  CHECK(direction_to(rf.fabric, t, rf.spine[0][0], rf.core[0]) == PortDirection::kUp);
  CHECK(direction_to(rf.fabric, t, rf.core[0], rf.spine[0][0]) == PortDirection::kDown);

  SECTION("a core serving one rail only is single-rail") {
    const RailFabric one = rail_fabric(
        {.rails = 1, .leaves_per_rail = 2, .hosts_per_leaf = 2, .spines_per_rail = 2, .cores = 1});
    const ibfx::Topology t1 = ibfx::classify_topology(one.fabric, {}, {});
    CHECK(tier(t1, one.core[0]) == Tier::kCore);
    CHECK(single(t1, one.core[0]) == 0);
  }
}

TEST_CASE("rings and islands get unknown tiers without crashing", "[topology]") {
  ibfx::test::FabricBuilder b;
  SECTION("a ring of switches without HCAs") {
    std::vector<int> sw;
    for (int i = 0; i < 4; ++i) sw.push_back(b.add_switch("ring-" + std::to_string(i)));
    for (int i = 0; i < 4; ++i) b.link(sw[static_cast<std::size_t>(i)], sw[(i + 1) % 4]);
    const ibfx::Fabric f = b.build();
    const ibfx::Topology t = ibfx::classify_topology(f, {}, {});
    CHECK(t.count(Tier::kUnknown) == 4);
    for (const auto& dirs : t.direction) {
      for (PortDirection d : dirs) CHECK(d == PortDirection::kPeer);
    }
  }
  SECTION("an odd ring with hosts on one switch") {
    std::vector<int> sw;
    for (int i = 0; i < 5; ++i) sw.push_back(b.add_switch("ring-" + std::to_string(i)));
    for (int i = 0; i < 5; ++i) b.link(sw[static_cast<std::size_t>(i)], sw[(i + 1) % 5]);
    const int h = b.add_hca("host mlx5_0");
    b.link(h, sw[0]);
    const ibfx::Fabric f = b.build();
    const ibfx::Topology t = ibfx::classify_topology(f, {}, {});
    CHECK(tier(t, sw[0]) == Tier::kLeaf);
    CHECK(tier(t, sw[1]) == Tier::kSpine);
    CHECK(tier(t, sw[4]) == Tier::kSpine);
    // ring-2 and ring-3 are both two hops from the leaf and cabled together.
    CHECK(tier(t, sw[2]) == Tier::kUnknown);
    CHECK(tier(t, sw[3]) == Tier::kUnknown);
    CHECK(direction_to(f, t, sw[1], sw[2]) == PortDirection::kPeer);
  }
  SECTION("a switch chain deeper than a core") {
    std::vector<int> sw;
    for (int i = 0; i < 5; ++i) sw.push_back(b.add_switch("chain-" + std::to_string(i)));
    for (int i = 0; i + 1 < 5; ++i)
      b.link(sw[static_cast<std::size_t>(i)], sw[static_cast<std::size_t>(i + 1)]);
    b.link(b.add_hca("host mlx5_0"), sw[0]);
    const ibfx::Topology t = ibfx::classify_topology(b.build(), {}, {});
    CHECK(tier(t, sw[2]) == Tier::kCore);
    CHECK(tier(t, sw[3]) == Tier::kUnknown);
    CHECK(tier(t, sw[4]) == Tier::kUnknown);
  }
  SECTION("an empty fabric") {
    const ibfx::Topology t = ibfx::classify_topology(ibfx::Fabric{}, {}, {});
    CHECK(t.tier.empty());
  }
}

TEST_CASE("an HCA on a leaf of another rail is miscabled", "[topology]") {
  const RailFabric rf = rail_fabric({.rails = 2,
                                     .leaves_per_rail = 1,
                                     .hosts_per_leaf = 4,
                                     .spines_per_rail = 1,
                                     .cores = 0,
                                     .swap_host0 = true});
  const ibfx::Topology t = ibfx::classify_topology(rf.fabric, {}, {});
  // host0's mlx5_0 and mlx5_1 are swapped: each leaf keeps its majority rail.
  CHECK(rail(t, rf.leaf[0][0]) == 0);
  CHECK(rail(t, rf.leaf[1][0]) == 1);
  REQUIRE(t.miscabled.size() == 2);
  const ibfx::MiscabledHca& m = t.miscabled[0];
  CHECK(m.hca_node == rf.hca[0][0]);
  CHECK(m.hca_port == 1);
  CHECK(m.switch_node == rf.leaf[1][0]);
  CHECK(m.expected_rail == 1);
  CHECK(m.actual_rail == 0);
  CHECK(t.miscabled[1].hca_node == rf.hca[0][1]);
  CHECK(t.miscabled[1].expected_rail == 0);
}

TEST_CASE("a management HCA on a spine does not make it a leaf", "[topology]") {
  ibfx::test::FabricBuilder b;
  const int spine = b.add_switch("spine");
  const int leaf_a = b.add_switch("leaf-a");
  const int leaf_b = b.add_switch("leaf-b");
  b.link(spine, leaf_a);
  b.link(spine, leaf_b);
  for (int i = 0; i < 3; ++i) {
    b.link(b.add_hca("a" + std::to_string(i) + " mlx5_0"), leaf_a);
    b.link(b.add_hca("b" + std::to_string(i) + " mlx5_0"), leaf_b);
  }
  const int mgmt = b.add_hca("ufm mlx5_0");
  b.link(mgmt, spine);
  const ibfx::Fabric f = b.build();
  const ibfx::Topology t = ibfx::classify_topology(f, {}, {});
  CHECK(tier(t, spine) == Tier::kSpine);
  CHECK(tier(t, leaf_a) == Tier::kLeaf);
  CHECK(tier(t, leaf_b) == Tier::kLeaf);
  CHECK(direction_to(f, t, spine, mgmt) == PortDirection::kDown);
  CHECK(direction_to(f, t, leaf_a, spine) == PortDirection::kUp);
  CHECK(single(t, spine) == 0);  // the management HCA is not a rail of its own
}

TEST_CASE("config overrides tiers and rails", "[topology]") {
  const RailFabric rf = rail_fabric(
      {.rails = 2, .leaves_per_rail = 1, .hosts_per_leaf = 2, .spines_per_rail = 1, .cores = 0});
  std::vector<std::string> names(rf.fabric.nodes.size());
  names[static_cast<std::size_t>(rf.hca[0][0])] = "storage01";  // no mlx5_<n>: no rail
  ibfx::TopologyConfig config;
  ibfx::Topology t = ibfx::classify_topology(rf.fabric, names, config);
  CHECK(rail(t, rf.hca[0][0]) == ibfx::kNoRail);
  CHECK(rail(t, rf.hca[1][0]) == 0);
  CHECK(t.miscabled.empty());  // an HCA without a rail is not miscabled

  config.rail_by_guid[rf.fabric.nodes[static_cast<std::size_t>(rf.hca[0][0])].guid] = 1;
  config.rail_by_name.emplace_back("^leaf-r1", 7);
  config.tier_by_name.emplace_back("^spine-r1", Tier::kCore);
  t = ibfx::classify_topology(rf.fabric, names, config);
  CHECK(rail(t, rf.hca[0][0]) == 1);
  CHECK(rail(t, rf.leaf[1][0]) == 7);
  CHECK(tier(t, rf.spine[1][0]) == Tier::kCore);
  CHECK(t.miscabled.size() == 2 + 1);  // both rail-1 HCAs, plus storage01 on the rail-0 leaf

  SECTION("the rail regex is configurable") {
    ibfx::TopologyConfig c;
    c.rail_regex = "gpu([0-9]+)";
    std::vector<std::string> gpu_names(rf.fabric.nodes.size());
    gpu_names[static_cast<std::size_t>(rf.hca[0][1])] = "node-a gpu5";
    const ibfx::Topology t2 = ibfx::classify_topology(rf.fabric, gpu_names, c);
    CHECK(rail(t2, rf.hca[0][1]) == 5);
    CHECK(rail(t2, rf.hca[1][1]) == ibfx::kNoRail);  // "host1 mlx5_1" does not match
  }
  SECTION("a leaf forced by GUID seeds the ranking") {
    ibfx::TopologyConfig c;
    c.tier_by_guid[rf.fabric.nodes[static_cast<std::size_t>(rf.spine[0][0])].guid] = Tier::kLeaf;
    const ibfx::Topology t3 = ibfx::classify_topology(rf.fabric, {}, c);
    CHECK(tier(t3, rf.spine[0][0]) == Tier::kLeaf);
    CHECK(direction_to(rf.fabric, t3, rf.leaf[0][0], rf.spine[0][0]) == PortDirection::kPeer);
  }
}

TEST_CASE("parse_topology_config", "[topology]") {
  const YAML::Node doc = YAML::Load(R"(topology:
  rail_regex: "nic([0-9]+)$"
  rail_by_guid:
    0x0002c90300a1b2c3: 3
  rail_by_name:
    "^storage": 0
    "^mgmt": 1
  tier_by_guid:
    "0x10": core
  tier_by_name:
    "^sw-spine": spine
)");
  const ibfx::TopologyConfig c = ibfx::parse_topology_config(doc["topology"], "test.yaml");
  CHECK(c.rail_regex == "nic([0-9]+)$");
  CHECK(c.rail_by_guid.at(0x0002c90300a1b2c3ULL) == 3);
  REQUIRE(c.rail_by_name.size() == 2);
  CHECK(c.rail_by_name[0].first == "^storage");  // document order is kept
  CHECK(c.rail_by_name[1].second == 1);
  CHECK(c.tier_by_guid.at(0x10) == Tier::kCore);
  CHECK(c.tier_by_name.at(0).second == Tier::kSpine);

  CHECK(ibfx::parse_topology_config(YAML::Node(), "x").rail_regex == "mlx5_([0-9]+)$");

  CHECK(topology_parse_error("topology:\n  rail_regex: \"mlx5_([0-9]+\"\n")
            .starts_with("test.yaml:2: topology.rail_regex: invalid regular expression"));
  CHECK(topology_parse_error("topology:\n  rail_regex: mlx5_\n") ==
        "test.yaml:2: topology.rail_regex: \"mlx5_\" needs a capture group for the rail number");
  CHECK(topology_parse_error("topology:\n  tier_by_name:\n    \"^a\": leaf\n    \"^b\": top\n") ==
        "test.yaml:4: topology.tier_by_name: invalid tier \"top\" (expected leaf, spine, core "
        "or unknown)");
  CHECK(topology_parse_error("topology:\n  tier_by_guid:\n    0x1: hca\n")
            .starts_with("test.yaml:3: topology.tier_by_guid: invalid tier \"hca\""));
  CHECK(topology_parse_error("topology:\n  rail_by_guid:\n    0xzz: 1\n")
            .starts_with("test.yaml:3: topology.rail_by_guid: invalid GUID \"0xzz\""));
  CHECK(topology_parse_error("topology:\n  rail_by_name:\n    \"^a\": one\n") ==
        "test.yaml:3: topology.rail_by_name: expected an integer, got \"one\"");
  CHECK(topology_parse_error("topology:\n  rail_by_name:\n    \"[\": 1\n")
            .starts_with("test.yaml:3: topology.rail_by_name: invalid regular expression \"[\""));
  CHECK(topology_parse_error("topology:\n  rail_by_name: [1, 2]\n") ==
        "test.yaml:2: topology.rail_by_name: expected a mapping, got a list");
  CHECK(topology_parse_error("topology:\n  rails: {}\n") ==
        "test.yaml:2: topology.rails: unknown key");
  CHECK(topology_parse_error("topology: 3\n") ==
        "test.yaml:1: topology: expected a mapping of keys, got the value \"3\"");
}

TEST_CASE("classify_topology rejects a programmatic bad regex", "[topology]") {
  ibfx::TopologyConfig c;
  c.rail_regex = "(";
  CHECK_THROWS_AS(ibfx::classify_topology(ibfx::Fabric{}, {}, c), ibfx::ConfigError);
}
