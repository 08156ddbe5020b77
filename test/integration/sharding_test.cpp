// Two daemons with sharding.count 2 split one fabric: together they read
// every port exactly once.
#include <catch2/catch.hpp>
#include <set>

#include "daemon_fixture.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

namespace {
std::set<std::string> counted_ports(const Series& s) {
  std::set<std::string> ports;
  const std::string family = "infiniband_port_transmit_wait_seconds_total{";
  for (const auto& [key, v] : s) {
    if (key.rfind(family, 0) == 0) ports.insert(key.substr(family.size()));
  }
  return ports;
}
}  // namespace

TEST_CASE("Two shards together cover every port exactly once", "[sharding][integration]") {
  FatTreeSpec spec;
  spec.servers = 6;
  spec.rails = 2;
  spec.radix = 8;
  SimFabric sim(make_fat_tree(spec));
  std::vector<std::set<std::string>> shards;
  std::set<std::string> all;
  {
    Daemon whole(sim);
    REQUIRE(whole.wait_ready());
    all = counted_ports(whole.series());
  }
  for (int index = 0; index < 2; ++index) {
    const std::string cfg = sim.dir() + "/shard" + std::to_string(index) + ".yaml";
    ConfigYaml().set("sharding.count", "2").set("sharding.index", std::to_string(index)).write(cfg);
    Daemon d(sim, {"--config.file=" + cfg});
    REQUIRE(d.wait_ready());
    shards.push_back(counted_ports(d.series()));
  }
  REQUIRE(!all.empty());
  CHECK(!shards[0].empty());
  CHECK(!shards[1].empty());
  std::set<std::string> both;
  for (const auto& p : shards[0]) {
    CHECK(shards[1].count(p) == 0);  // exactly once
    both.insert(p);
  }
  both.insert(shards[1].begin(), shards[1].end());
  CHECK(both == all);  // every port
}

TEST_CASE("A shard index outside the shard count is rejected at start-up",
          "[sharding][integration]") {
  FatTreeSpec spec;
  spec.servers = 2;
  spec.rails = 1;
  spec.radix = 8;
  SimFabric sim(make_fat_tree(spec));
  const std::string cfg = sim.dir() + "/bad.yaml";
  ConfigYaml().set("sharding.count", "2").set("sharding.index", "2").write(cfg);
  const RunResult r = sim.run({IBFX_DAEMON_PATH, "--config.file=" + cfg, "--check-config"});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("sharding.index") != std::string::npos);
  CHECK(r.err.find(":3:") != std::string::npos);
}
