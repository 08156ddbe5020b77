// Do no harm to the subnet manager (#17, docs/safety.md). The daemon runs on
// the management node, next to opensm; on the simulated fabric opensm is
// bound to the management HCA, the port every client attaches to. A PMA
// request the simulator does not answer itself (PortSamplesControl) sent to
// that port is handed to opensm, and kills it.
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <string>

#include "daemon_fixture.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

namespace {

Fabric small_tree() {
  const FatTreeSpec spec = small_fat_tree();
  return make_fat_tree(spec);
}

const std::string kMgmtHca = hca_name("mgmt01", 0);

// `sminfo` (infiniband-diags, under the same preload) as the oracle:
// "sminfo: sm lid 1 sm guid 0x..., activity count 42 priority 0 state 3 SMINFO_MASTER".
struct SmInfo {
  int lid = 0;
  std::string state;
};
SmInfo sminfo(SimFabric& sim) {
  const RunResult r = sim.run({"sminfo"});
  INFO("sminfo: " << r.out << r.err);
  REQUIRE(r.ok());
  std::smatch m;
  const std::regex re(R"(sm lid ([0-9]+) .* state [0-9]+ (SMINFO_[A-Z]+))");
  REQUIRE(std::regex_search(r.out, m, re));
  return {std::stoi(m[1]), m[2]};
}

std::string write_config(SimFabric& sim, const std::string& name, const std::string& text) {
  const std::string path = sim.dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("SM safety: sweeps and discoveries leave opensm on the management HCA master",
          "[sm_safety][integration]") {
  SimFabric sim(small_tree());
  // The set-up the issue describes: opensm bound to the management HCA,
  // which is also where the daemon's MAD worker and discovery attach.
  const int mgmt_lid = sim.lid_of(kMgmtHca);
  const SmInfo before = sminfo(sim);
  REQUIRE(before.state == "SMINFO_MASTER");
  REQUIRE(before.lid == mgmt_lid);

  const std::string cfg =
      write_config(sim, "exporter.yaml",
                   ConfigYaml().sweep_interval("1s").set("discovery.interval", "2s").str());
  Daemon daemon(sim, {"--config.file=" + cfg});
  REQUIRE(daemon.wait_ready());
  // Several sweeps, each a chance to probe a node it has not probed yet,
  // and several discoveries, each a fresh look at every node.
  REQUIRE(
      daemon.wait_value_at_least("infiniband_exporter_sweeps_total", 6, std::chrono::seconds(30)));
  REQUIRE(daemon.wait_value_at_least("infiniband_exporter_discoveries_total", 3,
                                     std::chrono::seconds(30)));
  INFO(sim.unexpected_exits());
  CHECK(sim.unexpected_exits().empty());
  const SmInfo after = sminfo(sim);
  CHECK(after.state == "SMINFO_MASTER");
  CHECK(after.lid == mgmt_lid);

  // The management HCA is still read, with the attributes every sweep
  // reads (the simulator's PMA answers those itself), and answers.
  const Series s = daemon.series();
  const std::string guid = guid_of(s, kMgmtHca);
  REQUIRE_FALSE(guid.empty());
  CHECK(value(s, "infiniband_exporter_node_up{node_guid=\"" + guid + "\"") == 1);
  CHECK(value(s, "infiniband_port_transmit_packets_total" +
                     port_labels(guid, kMgmtHca, "hca", 1)) >= 0);
  // The operator is told, once, what is withheld from which node and why.
  const std::string log = daemon.process().read_stderr();
  INFO(log);
  const std::regex withheld("not sending optional MADs .*" + kMgmtHca + ".*the master SM");
  CHECK(std::regex_search(log, withheld));

  // --once too: discovery, two sweeps, exit.
  const RunResult once = sim.run(
      {IBFX_DAEMON_PATH, "--once", "--config.file=" + cfg, "--web.listen-address=127.0.0.1:0"},
      std::chrono::seconds(60));
  INFO(once.err);
  CHECK(once.ok());
  CHECK(sim.unexpected_exits().empty());
  CHECK(sminfo(sim).state == "SMINFO_MASTER");
}

TEST_CASE("SM safety: the opt-in really sends the probe to the SM's port",
          "[sm_safety][integration]") {
  // What the guard prevents, shown once: with
  // counters.probe_sm_and_local_ports the daemon probes the management HCA
  // like any node, and under ibsim that request reaches opensm (ibsim's
  // find_client() gives a request for QP1 to the port's SM client; umad2sim
  // hands it to opensm's PerfMgr agent, whose callback takes every MAD for
  // the answer to a request of its own) and kills it. Should the simulator
  // ever answer PortSamplesControl itself, this test says so and
  // docs/safety.md needs a look.
  SimFabric sim(small_tree());
  const std::string cfg = write_config(
      sim, "exporter.yaml",
      ConfigYaml().sweep_interval("1s").set("counters.probe_sm_and_local_ports", "true").str());
  const RunResult once = sim.run(
      {IBFX_DAEMON_PATH, "--once", "--config.file=" + cfg, "--web.listen-address=127.0.0.1:0"},
      std::chrono::seconds(60));
  INFO(once.err);
  CHECK(once.ok());
  REQUIRE(eventually([&] { return !sim.unexpected_exits().empty(); }, std::chrono::seconds(10)));
  const std::string exits = sim.unexpected_exits();
  INFO(exits);
  CHECK(exits.find("opensm (pid") != std::string::npos);
  CHECK(exits.find("ibsim (pid") == std::string::npos);
  sim.acknowledge_exits();
  CHECK(sim.unexpected_exits().empty());
}

TEST_CASE("SM safety: ibsim or opensm dying during a test is reported at teardown",
          "[sm_safety][integration]") {
  std::string reported;
  // A recorder in place of the suite's reporter (which fails the test).
  auto suite_reporter =
      SimFabric::set_exit_reporter([&reported](const std::string& what) { reported += what; });
  pid_t opensm = -1;
  {
    SimFabric sim(small_tree());
    CHECK(sim.unexpected_exits().empty());
    opensm = sim.opensm_pid();
    // SIGKILL, not the SIGSEGV the probe caused: no core dump to write.
    REQUIRE(::kill(opensm, SIGKILL) == 0);
    CHECK(eventually([&] { return !sim.unexpected_exits().empty(); }, std::chrono::seconds(10)));
  }
  {
    // Stopped by the test: not a failure.
    SimFabric sim(small_tree());
    sim.kill_simulator();
  }
  {
    // Made to exit by the test, and said so: not a failure either.
    SimFabric sim(small_tree());
    REQUIRE(::kill(sim.ibsim_pid(), SIGKILL) == 0);
    CHECK(eventually([&] { return !sim.unexpected_exits().empty(); }, std::chrono::seconds(10)));
    sim.acknowledge_exits();
    CHECK(sim.unexpected_exits().empty());
  }
  SimFabric::set_exit_reporter(std::move(suite_reporter));
  INFO(reported);
  CHECK(reported.find("opensm (pid " + std::to_string(opensm) + ") was killed by signal 9") !=
        std::string::npos);
  // Only that one: the stopped and the acknowledged exits are not reported.
  CHECK(reported.find("ibsim (pid") == std::string::npos);
  CHECK(reported.find(" while the test ran") == reported.rfind(" while the test ran"));
}
