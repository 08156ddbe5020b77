// The daemon under faults on the simulated fabric: MAD loss, flapping links,
// LIDs that change under it, and the simulator dying. What must hold is said
// next to each assertion.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

namespace {
Fabric tree() {
  const FatTreeSpec spec = small_fat_tree();
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
  ConfigYaml().sweep_interval("1s").mad("50ms", 4).write(cfg);
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
      ConfigYaml().sweep_interval("1s").mad("50ms", 2).write(cfg);
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
  const std::size_t port_series = count_family(before, "infiniband_port_physical_state");
  REQUIRE(port_series > 0);  // a family that no longer exists would pass vacuously
  for (int i = 0; i < 3; ++i) {
    sim.unlink(hca, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    Series mid = daemon.series();
    check_monotonic(before, mid);
    CHECK(count_family(mid, "infiniband_port_physical_state") == port_series);  // nothing vanished
    sim.relink(hca, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    Series after = daemon.series();
    check_monotonic(mid, after);
    CHECK(count_family(after, "infiniband_port_physical_state") == port_series);
    before = after;
  }
  const std::string guid = guid_of(before, hca);
  CHECK(daemon.wait_value("infiniband_port_physical_state" + port_labels(guid, hca, "hca", 1),
                          kPhysLinkUp, std::chrono::seconds(30)));
  CHECK(value(daemon.series(),
              "infiniband_port_symbol_errors_total" + port_labels(guid, hca, "hca", 1)) >= 5);
}

// The daemon's MAD workers, from /proc. Its other children, discovery
// processes, come and go at any time and are not counted.
static std::vector<pid_t> workers_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::istringstream in(read_file(task.path().string() + "/children"));
    for (pid_t child; in >> child;) {
      const std::string cmdline = read_file("/proc/" + std::to_string(child) + "/cmdline");
      if (cmdline.find("--mad-worker") != std::string::npos) out.push_back(child);
    }
  }
  return out;
}

TEST_CASE(
    "The simulator dies and comes back: last snapshot served, then recovery without a restart",
    "[faults][integration]") {
  SimFabric sim(tree());
  const std::string hca = hca_name("gpu0002", 1);
  sim.perf_set(hca, 1, "PortCounters.SymbolErrorCounter", 5);
  Daemon daemon(sim, {"--sweep.interval=500ms"});
  REQUIRE(daemon.wait_ready());
  const pid_t daemon_pid = daemon.process().pid();
  const Series first = daemon.series();
  const std::string guid = guid_of(first, hca);
  REQUIRE_FALSE(guid.empty());
  const std::string symbol_errors =
      "infiniband_port_symbol_errors_total" + port_labels(guid, hca, "hca", 1);
  REQUIRE(daemon.wait_value(symbol_errors, 5));
  CHECK(value(first, "infiniband_exporter_mad_worker_up") == 1);
  CHECK(value(first, "infiniband_exporter_mad_worker_restarts_total") == 0);
  // The daemon process itself is never a simulator client: only its worker.
  const std::vector<pid_t> workers = workers_of(daemon_pid);
  REQUIRE(workers.size() == 1);
  // umad2sim makes ./sys-<pid> in a process that opens a umad device.
  CHECK(std::filesystem::exists(sim.dir() + "/sys-" + std::to_string(workers[0])));
  CHECK_FALSE(std::filesystem::exists(sim.dir() + "/sys-" + std::to_string(daemon_pid)));
  std::vector<Series> history{daemon.series()};
  const Series good = history.back();

  sim.kill_simulator();
  // The worker cannot reach the simulator: it is presumed wedged after two
  // sweeps that got no answer, replaced, and the replacement waits for a
  // simulator. Meanwhile: worker_up 0, and the last good snapshot served.
  REQUIRE(eventually(
      [&] {
        history.push_back(daemon.series());
        return value(history.back(), "infiniband_exporter_mad_worker_up") == 0;
      },
      std::chrono::seconds(20)));
  const double frozen = value(daemon.series(), "infiniband_exporter_last_sweep_timestamp_seconds");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  REQUIRE(daemon.process().running());
  const HttpReply r = http_get(daemon.port(), "/metrics");
  REQUIRE(r.status == 200);
  const Series dead = parse_exposition(r.body);
  history.push_back(dead);
  // No sweep while the worker is down: the timestamp stays and its age grows.
  CHECK(value(dead, "infiniband_exporter_last_sweep_timestamp_seconds") == frozen);
  CHECK(static_cast<double>(std::time(nullptr)) - frozen >= 2.0);
  // The last good data is all there.
  REQUIRE(count_family(good, "infiniband_port_physical_state") > 0);
  CHECK(count_family(dead, "infiniband_port_physical_state") ==
        count_family(good, "infiniband_port_physical_state"));
  CHECK(value(dead, symbol_errors) == 5);
  CHECK(value(dead, "infiniband_exporter_mad_worker_up") == 0);

  sim.restart_simulator();
  // Recovery, bounded: a new worker, the fabric rediscovered, fresh sweeps;
  // the new simulator's counters start at zero, which the daemon must see
  // as an out-of-band clear (the total stays 5, the reset is counted).
  REQUIRE(eventually(
      [&] {
        history.push_back(daemon.series());
        const Series& s = history.back();
        return value(s, "infiniband_exporter_mad_worker_up") == 1 &&
               value(s, "infiniband_exporter_last_sweep_timestamp_seconds") > frozen &&
               value(s,
                     "infiniband_exporter_counters_reset_externally_total{counter=\"symbol_"
                     "errors\"}") >= 1;
      },
      std::chrono::seconds(60)));
  // Set after the restart: exported as exactly that much on top of the total.
  sim.perf_set(hca, 1, "PortCounters.SymbolErrorCounter", 7);
  REQUIRE(daemon.wait_value(symbol_errors, 12, std::chrono::seconds(20)));
  REQUIRE(eventually(
      [&] {
        history.push_back(daemon.series());
        const Series& s = history.back();
        for (const auto& [key, v] : good) {
          if (key.rfind("infiniband_port_physical_state{", 0) != 0) continue;
          const auto it = s.find(key);
          if (it == s.end() || it->second != v) return false;
        }
        return value(s, "infiniband_exporter_nodes_not_answering") == 0;
      },
      std::chrono::seconds(20)));
  const Series back = history.back();
  // Same daemon, never restarted; the worker was.
  CHECK(daemon.process().running());
  CHECK(daemon.process().pid() == daemon_pid);
  CHECK(value(back, "infiniband_exporter_mad_worker_restarts_total") >= 1);
  CHECK(count_family(back, "infiniband_port_physical_state") ==
        count_family(good, "infiniband_port_physical_state"));
  CHECK(value(back, symbol_errors) == 12);
  // No exported counter went backwards at any point of the episode.
  for (std::size_t i = 1; i < history.size(); ++i) check_monotonic(history[i - 1], history[i]);

  // SIGTERM: a clean exit that takes the worker with it.
  const std::vector<pid_t> now_workers = workers_of(daemon_pid);
  REQUIRE(now_workers.size() == 1);
  CHECK(now_workers[0] != workers[0]);
  CHECK(daemon.process().terminate(std::chrono::milliseconds(5000)) == 0);
  CHECK(eventually([&] { return ::kill(now_workers[0], 0) != 0 && errno == ESRCH; },
                   std::chrono::seconds(5)));
}

TEST_CASE("A CA that cannot be opened still fails start-up, with the worker's reason",
          "[faults][integration]") {
  SimFabric sim(tree());
  Process& daemon = sim.spawn({IBFX_DAEMON_PATH, "--web.listen-address=127.0.0.1:0", "--ca=bogus"});
  const auto code = daemon.wait(std::chrono::seconds(20));
  REQUIRE(code.has_value());
  CHECK(*code == 1);
  CHECK(daemon.read_stderr().find("cannot open umad port bogus") != std::string::npos);
}

TEST_CASE("The daemon's own port left in Initialize is exported, logged once and shown in /top",
          "[faults][integration]") {
  // A subnet manager that does not sweep (the "struggling SM" of issue #26)
  // leaves a port that comes back up in Initialize: no PMA MAD passes it.
  SimOptions quiet_sm;
  quiet_sm.opensm_config = {"sweep_interval 0"};
  SimFabric sim(small_fat_tree(), quiet_sm);
  const std::string cfg = sim.dir() + "/exporter.yaml";
  ConfigYaml().sweep_interval("1s").mad("50ms", 1).set("discovery.interval", "2s").write(cfg);
  Daemon daemon(sim, {"--config.file=" + cfg});
  REQUIRE(daemon.wait_ready());
  REQUIRE(daemon.wait_value("infiniband_exporter_local_port_state", 4));
  CHECK(http_get(daemon.port(), "/top").body.find("Active (4)\n") != std::string::npos);

  sim.unlink("mgmt01 mlx5_0", 1);
  sim.relink("mgmt01 mlx5_0", 1);
  INFO(daemon.process().read_stderr());
  REQUIRE(daemon.wait_value("infiniband_exporter_local_port_state", 2, std::chrono::seconds(30)));
  CHECK(daemon.wait_value_at_least("infiniband_exporter_nodes_not_answering", 1));
  const std::string top = http_get(daemon.port(), "/top").body;
  INFO(top);
  CHECK(top.find("mgmt01 mlx5_0") != std::string::npos);
  CHECK(top.find("Initialize (2): not Active, no PMA MAD passes") != std::string::npos);
  CHECK(top.find("LOCAL PORT") < top.find("NODES NOT ANSWERING"));
  // Logged once, not once per discovery.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const std::string log = daemon.process().read_stderr();
  const std::string line = "the local port is Initialize (PortInfo:PortState 2)";
  const auto first = log.find(line);
  CHECK(first != std::string::npos);
  CHECK(log.find(line, first + 1) == std::string::npos);
}
