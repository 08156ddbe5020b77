// The daemon under faults on the simulated fabric: MAD loss, flapping links,
// LIDs that change under it, and the simulator dying. What must hold is said
// next to each assertion.
#include <signal.h>

#include <catch2/catch.hpp>

#include "daemon_fixture.h"

using namespace ibfx::test;

namespace {
Fabric tree() {
  FatTreeSpec spec;
  spec.servers = 4;
  spec.rails = 2;
  spec.radix = 8;
  return make_fat_tree(spec);
}

// Every *_total series of `before` that is also in `after` did not decrease.
void check_monotonic(const Series& before, const Series& after) {
  for (const auto& [key, v] : before) {
    const auto brace = key.find('{');
    const std::string family = key.substr(0, brace);
    if (family.size() < 6 || family.compare(family.size() - 6, 6, "_total") != 0) continue;
    auto it = after.find(key);
    if (it == after.end()) continue;
    INFO(key);
    CHECK(it->second >= v);
  }
}

void drop_everywhere(SimFabric& sim, const Fabric& f, int rate) {
  for (const auto& node : f.nodes()) {
    for (int p = 1; p <= node.num_ports(); ++p) {
      if (node.ports[static_cast<std::size_t>(p)].connected()) sim.error_rate(node.name, p, rate);
    }
  }
}
}  // namespace

TEST_CASE("MAD loss on some nodes: their ports are recovered by retries, others untouched",
          "[faults][integration]") {
  const Fabric f = tree();
  SimFabric sim(f);
  const std::string cfg = sim.dir() + "/exporter.yaml";
  std::ofstream(cfg) << "sweep_interval: 1s\nmad:\n  timeout: 50ms\n  retries: 4\n";
  Daemon daemon(sim, {"--config.file=" + cfg});
  REQUIRE(daemon.wait_ready());
  Series before = daemon.series();
  const double ports_clean = value(before, "infiniband_exporter_swept_ports");
  // 20 % loss on two HCA ports (each MAD crosses that port twice: an attempt
  // succeeds with p = 0.64, five attempts with p > 0.99).
  for (const char* host : {"gpu0001", "gpu0003"}) sim.error_rate(hca_name(host, 1), 1, 20);
  const double sweeps = value(before, "infiniband_exporter_sweeps_total");
  REQUIRE(daemon.wait_value_at_least("infiniband_exporter_sweeps_total", sweeps + 4));
  const Series after = daemon.series();
  CHECK(value(after, "infiniband_exporter_mad_retries_total") >
        value(before, "infiniband_exporter_mad_retries_total"));
  CHECK(value(after, "infiniband_exporter_swept_ports") >= ports_clean - 1);
  check_monotonic(before, after);
}

TEST_CASE("MAD loss on the whole fabric: sweeps keep their schedule, failures are counted",
          "[faults][integration]") {
  const Fabric f = tree();
  for (int rate : {5, 20, 50}) {
    DYNAMIC_SECTION("drop rate " << rate << "%") {
      SimFabric sim(f);
      const std::string cfg = sim.dir() + "/exporter.yaml";
      std::ofstream(cfg) << "sweep_interval: 1s\nmad:\n  timeout: 50ms\n  retries: 2\n";
      Daemon daemon(sim, {"--config.file=" + cfg});
      REQUIRE(daemon.wait_ready());
      const Series before = daemon.series();
      drop_everywhere(sim, f, rate);
      // A MAD crosses several lossy ports each way, so whole-fabric loss
      // compounds; what must hold is that sweeps still finish within their
      // budget (one interval) and keep coming, and that nothing breaks.
      const double sweeps = value(before, "infiniband_exporter_sweeps_total");
      REQUIRE(daemon.wait_value_at_least("infiniband_exporter_sweeps_total", sweeps + 4,
                                         std::chrono::seconds(20)));
      const Series after = daemon.series();
      CHECK(value(after, "infiniband_exporter_last_sweep_duration_seconds") <= 1.5);
      CHECK(value(after, "infiniband_exporter_mad_retries_total") > 0);
      if (rate >= 20) {
        // Losses this high cost some requests: counted, never hidden.
        CHECK(value(after, "infiniband_exporter_mad_requests_total{result=\"timeout\"}") > 0);
      }
      check_monotonic(before, after);
      CHECK(daemon.process().running());
      CHECK(http_get(daemon.port(), "/metrics").status == 200);
    }
  }
}

TEST_CASE("Link flaps: ports go down and up, series stay and never go backwards",
          "[faults][integration]") {
  SimFabric sim(tree());
  const std::string hca = hca_name("gpu0002", 1);
  sim.perf_set(hca, 1, "PortCounters.SymbolErrorCounter", 5);
  Daemon daemon(sim, {"--sweep.interval=500ms"});
  REQUIRE(daemon.wait_ready());
  Series before = daemon.series();
  const std::size_t port_series = count_family(before, "infiniband_port_up");
  for (int i = 0; i < 3; ++i) {
    sim.unlink(hca, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    Series mid = daemon.series();
    check_monotonic(before, mid);
    CHECK(count_family(mid, "infiniband_port_up") == port_series);  // nothing vanished
    sim.relink(hca, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    Series after = daemon.series();
    check_monotonic(mid, after);
    CHECK(count_family(after, "infiniband_port_up") == port_series);
    before = after;
  }
  const std::string guid = guid_of(before, hca);
  CHECK(daemon.wait_value("infiniband_port_up" + port_labels(guid, hca, "hca", 1), 1,
                          std::chrono::seconds(30)));
  CHECK(value(daemon.series(), "infiniband_port_symbol_errors_total" +
                                   port_labels(guid, hca, "hca", 1)) >= 5);
}

TEST_CASE("The simulator dies: the daemon keeps serving the last snapshot, its age visible",
          "[faults][integration]") {
  SimFabric sim(tree());
  Daemon daemon(sim, {"--sweep.interval=500ms"});
  REQUIRE(daemon.wait_ready());
  const double ts = value(daemon.series(), "infiniband_exporter_last_sweep_timestamp_seconds");
  REQUIRE(::kill(sim.ibsim_pid(), SIGKILL) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  // Still alive and serving; the last good data is there and does not move.
  REQUIRE(daemon.process().running());
  const HttpReply r = http_get(daemon.port(), "/metrics");
  CHECK(r.status == 200);
  const Series s = parse_exposition(r.body);
  CHECK(count_family(s, "infiniband_port_up") > 0);
  CHECK(value(s, "infiniband_exporter_last_sweep_timestamp_seconds") >= ts);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double later = value(daemon.series(), "infiniband_exporter_last_sweep_timestamp_seconds");
  const double age = static_cast<double>(std::time(nullptr)) - later;
  // Either sweeps stopped (age grows) or they complete empty-handed and say so.
  CHECK((age > 1.0 || value(daemon.series(), "infiniband_exporter_nodes_not_answering") > 0));
}
