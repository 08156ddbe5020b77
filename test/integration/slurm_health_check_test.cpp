// A node's fabric health for Slurm's health check, against a real Slurm
// (issue #43, docs/nodes.md): slurmctld and one slurmd per host, as the
// jobs test runs them, with HealthCheckProgram set to `ibfabric_exporter
// check-node` (through a wrapper that gives it this cluster's SLURM_CONF
// and the daemon's URL) every 2 s, over a simulated fabric swept every
// second. What must hold, in order on one cluster: a host whose second HCA
// never came up is drained ("1 of 2 rails"), a storage host with one HCA is
// not; a cable down drains its host within two health-check intervals and
// no other node changes; a flapping cable keeps it drained through the
// flaps; it returns only after recover_after; a node an administrator
// drained stays drained; a whole leaf lost is a fabric incident that
// drains no node; the daemon stopped, no node changes state and the check
// says why, within its timeout.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "slurm_fixture.h"
#include "test/sim/fabric_gen.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;
using namespace std::chrono_literals;

namespace {

constexpr auto kHealthCheckInterval = 2s;

struct NodeState {
  std::string state;  // sinfo %T: "idle", "drained", "draining", ...
  std::string reason;
};

std::map<std::string, NodeState> slurm_nodes(const SlurmCluster& slurm) {
  std::map<std::string, NodeState> out;
  const RunResult r = slurm.run({"sinfo", "-h", "-N", "-o", "%N|%T|%E"});
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find('|');
    const auto b = line.find('|', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    out[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  return out;
}

bool drained(const NodeState& s) { return s.state.find("drain") != std::string::npos; }

nlohmann::json node_health(const Daemon& d, const std::string& host) {
  return nlohmann::json::parse(http_get(d.port(), "/nodes/" + host).body);
}

}  // namespace

TEST_CASE(
    "Slurm health check on ibsim: drains a node with a bad cable, returns it after "
    "recover_after, never drains for a fabric incident",
    "[nodes][slurm][integration]") {
  const auto began = std::chrono::steady_clock::now();
  // gpu0001..0004 on leaf-r0-01 / leaf-r1-01, gpu0005..0008 on the -02
  // leaves; stor01 has one HCA.
  FatTreeSpec spec{.servers = 8, .rails = 2, .tiers = 2, .radix = 8, .storage_nodes = 2};
  SimFabric sim(make_fat_tree(spec));
  // gpu0008's rail 1 never comes up: its HCA is never discovered.
  sim.unlink("gpu0008 mlx5_1", 1);

  const std::string url_file = sim.dir() + "/daemon.url";
  const std::string check = sim.dir() + "/health_check.sh";
  // slurmd runs the program with SLURMD_NODENAME only: the wrapper gives it
  // this cluster's slurm.conf and the daemon's URL (known once it listens).
  auto write_wrapper = [&](const std::string& conf) {
    std::ofstream(check) << "#!/bin/sh\nexport SLURM_CONF='" << conf << "'\nexec '"
                         << IBFX_DAEMON_PATH << "' check-node --url=\"$(cat '" << url_file
                         << "' 2>/dev/null || echo http://127.0.0.1:1)\" --timeout=1500ms\n";
    ::chmod(check.c_str(), 0755);
  };
  // Until the cluster (its slurm.conf) and the daemon are up, a check that
  // finds nothing listening: fail-open, so every node comes up idle.
  std::ofstream(check) << "#!/bin/sh\nexec '" << IBFX_DAEMON_PATH
                       << "' check-node --url=http://127.0.0.1:1 --timeout=500ms\n";
  ::chmod(check.c_str(), 0755);
  SlurmCluster slurm(
      {"gpu0001", "gpu0002", "gpu0005", "gpu0008", "stor01"},
      "HealthCheckProgram=" + check + "\nHealthCheckInterval=2\n" + "HealthCheckNodeState=ANY\n");
  std::ofstream(url_file) << "http://127.0.0.1:1";
  write_wrapper(slurm.conf_path());

  const std::string config = ConfigYaml()
                                 .sweep_interval("1s")
                                 .set("discovery.interval", "2s")
                                 .set("nodes.recover_after", "12s")
                                 // Two downs within 15 s (not 10 minutes) make the cable
                                 // flapping, so that it clears within the test.
                                 .set("links.flapping_window", "15")
                                 .set("nodes.incident_min_hosts", "3")
                                 // gpu0008, unhealthy since the start, is no part of the
                                 // leaf's incident a minute later.
                                 .set("nodes.incident_window", "20s")
                                 .write(sim.dir() + "/exporter.yaml");
  auto daemon = std::make_unique<Daemon>(sim, std::vector<std::string>{"--config.file=" + config});
  REQUIRE(daemon->wait_ready());
  std::ofstream(url_file) << "http://127.0.0.1:" << daemon->port();

  // The host short of a rail is drained by its health check; the storage
  // host and the others are not.
  REQUIRE(eventually([&] { return drained(slurm_nodes(slurm)["gpu0008"]); }, 20s));
  auto nodes = slurm_nodes(slurm);
  CHECK(nodes["gpu0008"].reason == "ibfx: 1 of 2 rails active");
  CHECK(node_health(*daemon, "stor01")["verdict"] == "healthy");
  CHECK(node_health(*daemon, "stor01")["rails_expected"] == 1);
  for (const char* n : {"gpu0001", "gpu0002", "gpu0005", "stor01"}) {
    INFO(n);
    CHECK(nodes[n].state == "idle");
  }
  // By hand: --dry-run says what it would do and does nothing.
  {
    const RunResult dry =
        slurm.run({IBFX_DAEMON_PATH, "check-node", "--host=gpu0008",
                   "--url=http://127.0.0.1:" + std::to_string(daemon->port()), "--dry-run"});
    INFO(dry.out << dry.err);
    CHECK(dry.exit_code == 1);
    CHECK(dry.out.find("(drained already)") == std::string::npos);
    CHECK(dry.err.find("ibfx: 1 of 2 rails active (drained already)") != std::string::npos);
  }

  // An administrator drains gpu0005 for something else.
  REQUIRE(slurm
              .run({"scontrol", "update", "nodename=gpu0005", "state=drain",
                    "reason=bad DIMM, ticket 42"})
              .ok());

  // gpu0001's rail-0 cable goes down (LinkDowned at both ends, as hardware
  // counts it): drained within two health-check intervals of the verdict.
  auto cable_down = [&](std::uint64_t downs) {
    sim.unlink("gpu0001 mlx5_0", 1);
    sim.perf_set("gpu0001 mlx5_0", 1, "PortCounters.LinkDownedCounter", downs);
    sim.perf_set("leaf-r0-01", 1, "PortCounters.LinkDownedCounter", downs);
  };
  cable_down(1);
  REQUIRE(
      eventually([&] { return node_health(*daemon, "gpu0001")["verdict"] == "unhealthy"; }, 15s));
  const auto judged = std::chrono::steady_clock::now();
  REQUIRE(eventually([&] { return drained(slurm_nodes(slurm)["gpu0001"]); }, 10s));
  const auto drain_took = std::chrono::steady_clock::now() - judged;
  CHECK(drain_took <= 2 * kHealthCheckInterval + 2s);  // + sinfo and the verdict's poll
  nodes = slurm_nodes(slurm);
  INFO(nodes["gpu0001"].reason);
  CHECK(nodes["gpu0001"].reason.starts_with("ibfx: mlx5_0 down (leaf-r0-01 p1) since "));
  CHECK(nodes["gpu0002"].state == "idle");
  CHECK(nodes["stor01"].state == "idle");
  CHECK(nodes["gpu0005"].reason == "bad DIMM, ticket 42");

  // It flaps: up, down again, up. Drained through all of it.
  bool stayed = true;
  auto hold = [&](std::chrono::seconds for_how_long) {
    const auto until = std::chrono::steady_clock::now() + for_how_long;
    while (std::chrono::steady_clock::now() < until) {
      stayed = stayed && drained(slurm_nodes(slurm)["gpu0001"]);
      std::this_thread::sleep_for(500ms);
    }
  };
  sim.relink("gpu0001 mlx5_0", 1);
  hold(4s);
  cable_down(2);
  hold(3s);
  sim.relink("gpu0001 mlx5_0", 1);
  CHECK(stayed);

  // The cable stays up: flapping until its first down leaves the 15 s
  // window, then back in service only recover_after after that, the last
  // fault the daemon saw.
  REQUIRE(eventually([&] { return node_health(*daemon, "gpu0001")["recover_at"] > 0; }, 30s));
  const double recover_at = node_health(*daemon, "gpu0001")["recover_at"].get<double>();
  const auto cleared = std::chrono::system_clock::now();
  REQUIRE(eventually([&] { return slurm_nodes(slurm)["gpu0001"].state == "idle"; }, 30s));
  const double resumed =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(resumed >= recover_at);
  // nodes.recover_after is 12 s; the daemon saw the fault clear at most a
  // sweep (1 s) and a discovery (2 s) before `cleared`.
  CHECK(std::chrono::system_clock::now() - cleared >= std::chrono::seconds(8));
  // The administrator's drain stays.
  nodes = slurm_nodes(slurm);
  CHECK(drained(nodes["gpu0005"]));
  CHECK(nodes["gpu0005"].reason == "bad DIMM, ticket 42");
  CHECK(drained(nodes["gpu0008"]));

  // A whole leaf lost (leaf-r1-01: rail 1 of gpu0001..0004): a fabric
  // incident, no node drained.
  for (int port = 1; port <= 4; ++port) sim.unlink("leaf-r1-01", port);
  REQUIRE(eventually(
      [&] { return node_health(*daemon, "gpu0002")["verdict"] == "fabric incident"; }, 15s));
  CHECK(node_health(*daemon, "gpu0001")["verdict"] == "fabric incident");
  const auto during = std::chrono::steady_clock::now() + 3 * kHealthCheckInterval;
  while (std::chrono::steady_clock::now() < during) {
    nodes = slurm_nodes(slurm);
    CHECK(nodes["gpu0001"].state == "idle");
    CHECK(nodes["gpu0002"].state == "idle");
    std::this_thread::sleep_for(500ms);
  }
  const auto all = nlohmann::json::parse(http_get(daemon->port(), "/nodes").body);
  CHECK(all["fabric_incident"] == 4);
  CHECK(daemon->series().at("infiniband_node_rails_active{host=\"gpu0002\"}") == 1);

  // The daemon stopped: nothing changes, and the check says why.
  const auto before = slurm_nodes(slurm);
  daemon->process().terminate();
  std::this_thread::sleep_for(3 * kHealthCheckInterval);
  CHECK(slurm_nodes(slurm).size() == before.size());
  for (const auto& [name, s] : slurm_nodes(slurm)) {
    INFO(name);
    CHECK(s.state == before.at(name).state);
    CHECK(s.reason == before.at(name).reason);
  }
  const auto asked = std::chrono::steady_clock::now();
  const RunResult gone =
      slurm.run({IBFX_DAEMON_PATH, "check-node", "--host=gpu0002",
                 "--url=http://127.0.0.1:" + std::to_string(daemon->port()), "--timeout=2s"});
  CHECK(std::chrono::steady_clock::now() - asked < 3s);
  INFO(gone.err);
  CHECK(gone.exit_code == 2);
  CHECK(gone.err.find("fabric health unknown") != std::string::npos);
  CHECK(gone.err.find("nothing done (fail-open)") != std::string::npos);
  WARN("slurm health check test took "
       << std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() << " s");
}
