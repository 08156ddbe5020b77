// SIGHUP reloads the configuration without losing counters or the listener;
// a broken configuration is rejected and the old one keeps running.
#include <signal.h>

#include <catch2/catch.hpp>

#include "daemon_fixture.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

TEST_CASE("SIGHUP applies a new node-name-map and keeps counters and rejects a bad config",
          "[reload][integration]") {
  const FatTreeSpec spec = small_fat_tree();
  SimFabric sim(make_fat_tree(spec));
  const std::string cfg = sim.dir() + "/exporter.yaml";
  ConfigYaml().sweep_interval("500ms").raw_transmit_wait().write(cfg);
  sim.perf_set("leaf-r0-01", 2, "PortCounters.PortXmitWait", 100);
  Daemon daemon(sim, {"--config.file=" + cfg});
  REQUIRE(daemon.wait_ready());
  const std::string guid = guid_of(daemon.series(), "leaf-r0-01");
  REQUIRE(!guid.empty());
  REQUIRE(daemon.wait_value(
      "infiniband_port_transmit_wait_total" + port_labels(guid, "leaf-r0-01", "switch", 2), 100));

  // A node-name-map renames the leaf: labels follow, the counter carries on.
  const std::string map = sim.dir() + "/names.map";
  std::ofstream(map) << guid << " \"rack7-leaf\"\n";
  ConfigYaml()
      .sweep_interval("500ms")
      .set("node_name_map_file", map)
      .raw_transmit_wait()
      .write(cfg);
  REQUIRE(::kill(daemon.process().pid(), SIGHUP) == 0);
  const std::string renamed =
      "infiniband_port_transmit_wait_total" + port_labels(guid, "rack7-leaf", "switch", 2);
  CHECK(daemon.wait_value(renamed, 100));
  sim.perf_set("leaf-r0-01", 2, "PortCounters.PortXmitWait", 250);
  CHECK(daemon.wait_value(renamed, 250));

  // A broken file: rejected with a logged reason, the old setup keeps serving.
  ConfigYaml().sweep_interval("500ms").set("mad.retries", "lots").write(cfg);
  REQUIRE(::kill(daemon.process().pid(), SIGHUP) == 0);
  CHECK(eventually(
      [&] { return daemon.process().read_stderr().find("reload rejected") != std::string::npos; }));
  CHECK(daemon.process().read_stderr().find("mad.retries") != std::string::npos);
  CHECK(daemon.process().running());
  sim.perf_set("leaf-r0-01", 2, "PortCounters.PortXmitWait", 400);
  CHECK(daemon.wait_value(renamed, 400));
}

TEST_CASE("SIGTERM stops the daemon cleanly with exit status 0", "[reload][integration]") {
  FatTreeSpec spec;
  spec.servers = 2;
  spec.rails = 1;
  spec.radix = 8;
  SimFabric sim(make_fat_tree(spec));
  Daemon daemon(sim);
  REQUIRE(daemon.wait_ready());
  REQUIRE(::kill(daemon.process().pid(), SIGTERM) == 0);
  const auto code = daemon.process().wait(std::chrono::seconds(10));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(daemon.process().read_stderr().find("shutting down") != std::string::npos);
}
