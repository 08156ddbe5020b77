// The binary and default config from the unpacked .deb (test/packaging.cmake
// sets IBFX_PACKAGE_ROOT) sweep the simulated fabric. Hidden ("[.]") so the
// plain integration run, which has no package, does not select it.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "daemon_fixture.h"

using namespace ibfx::test;

TEST_CASE("Packaged binary with the packaged config sweeps the simulated fabric",
          "[.][package][integration]") {
  const char* root_env = std::getenv("IBFX_PACKAGE_ROOT");
  REQUIRE(root_env != nullptr);
  const std::string root = root_env;
  const FatTreeSpec spec = small_fat_tree();
  SimFabric sim(spec);
  sim.perf_set("spine-01", 1, "PortCounters.SymbolErrorCounter", 4242);
  // --sweep.interval only shortens --once's wait between its two sweeps.
  const RunResult r =
      sim.run({root + "/usr/bin/ibfabric_exporter",
               "--config.file=" + root + "/etc/ibfabric_exporter/ibfabric_exporter.yaml", "--once",
               "--sweep.interval=1s"},
              std::chrono::seconds(120));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Series s = parse_exposition(r.out);
  const std::string guid = guid_of(s, "spine-01");
  REQUIRE(!guid.empty());
  // An error counter appears once non-zero, with the exact value set.
  CHECK(value(s, "infiniband_port_symbol_errors_total" +
                     port_labels(guid, "spine-01", "switch", 1)) == 4242);
  CHECK(count_family(s, "infiniband_exporter_node_up") > 0);
}
