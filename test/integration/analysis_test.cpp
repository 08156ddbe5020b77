// Topology-aware scores on a simulated fabric animated by the scenario
// driver: the culprit ranks first, and a uniform baseline raises nothing.
#include <catch2/catch.hpp>
#include <regex>

#include "daemon_fixture.h"
#include "test/scenario/scenario.h"

using namespace ibfx::test;

namespace {
std::string scenario_yaml(const std::string& effects) {
  return "name: t\nseed: 7\nfabric:\n  servers: 8\n  rails: 2\n  tiers: 2\n  radix: 8\n"
         "duration: 600\ntick: 1.0\neffects:\n  - type: allreduce\n    load: 0.5\n"
         "  - type: cross_rail\n    load: 0.3\n" +
         effects;
}

// Drives the scenario one simulated second per wall second while the daemon
// sweeps every second; returns the last /metrics series.
Series drive(SimFabric& sim, ScenarioDriver& driver, Daemon& daemon, int seconds) {
  for (int i = 0; i < seconds; ++i) {
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& line : driver.step()) sim.console(line);
    std::this_thread::sleep_until(start + std::chrono::seconds(1));
  }
  return daemon.series();
}

// The port series (port label not empty) of a family, highest value first.
std::vector<std::pair<double, std::string>> ranked(const Series& s, const std::string& family) {
  std::vector<std::pair<double, std::string>> out;
  for (const auto& [key, v] : s) {
    if (key.rfind(family + "{", 0) == 0 && key.find("port=\"\"") == std::string::npos) {
      out.emplace_back(v, key);
    }
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::string config_file(SimFabric& sim) {
  // The driver's PortXmitWait tick (256 ns) is the tick the daemon assumes.
  const std::string path = sim.dir() + "/exporter.yaml";
  std::ofstream(path) << "scores:\n  tick_seconds: 256e-9\n";
  return path;
}

// A scenario's fabric in ibsim with the daemon sweeping it every second.
struct ScenarioRun {
  explicit ScenarioRun(const std::string& yaml)
      : driver(parse_scenario(yaml)),
        sim(driver.fabric()),
        daemon(sim, {"--config.file=" + config_file(sim)}) {
    REQUIRE(daemon.wait_ready());
  }
  Series drive_for(int seconds) { return drive(sim, driver, daemon, seconds); }
  ScenarioDriver driver;
  SimFabric sim;
  Daemon daemon;
};
}  // namespace

TEST_CASE("A congested spine port ranks first with tier and rail labels",
          "[analysis][integration]") {
  ScenarioRun run(
      scenario_yaml("  - type: congested_port\n"
                    "    node: spine-02\n    port: 3\n"
                    "    ratio: 0.7\n    spread: 0.3\n"));
  const Series s = run.drive_for(5);
  const auto top = ranked(s, "infiniband_hotspot_score");
  REQUIRE(!top.empty());
  INFO(top.front().second);
  CHECK(top.front().second.find("node_name=\"spine-02\"") != std::string::npos);
  CHECK(top.front().second.find("port=\"3\",tier=\"spine\"") != std::string::npos);
  CHECK(top.front().first > 3.0);
  // The culprit's stall ratio is what the driver set.
  const auto stall = ranked(s, "infiniband_port_stall_ratio_last");
  REQUIRE(!stall.empty());
  CHECK(stall.front().second.find("node_name=\"spine-02\"") != std::string::npos);
  CHECK(stall.front().first == Approx(0.7).margin(0.1));
  // Leaves carry their rail; HCAs their rail from "mlx5_<n>".
  CHECK(s.count(R"(infiniband_tail_latency_score{tier="spine",rail=""})") == 1);
  bool leaf_rail = false;
  for (const auto& [key, v] : s) {
    leaf_rail = leaf_rail || (key.rfind("infiniband_port_up{", 0) == 0 &&
                              key.find("node_name=\"leaf-r1-01\"") != std::string::npos &&
                              key.find("tier=\"leaf\",rail=\"1\"") != std::string::npos);
  }
  CHECK(leaf_rail);
  CHECK(s.at(R"(infiniband_port_stall_ratio_count{tier="spine",rail=""})") > 0);

  // The full exposition, analysis included, is promtool-clean.
  const std::string path = run.sim.dir() + "/scrape.prom";
  std::ofstream(path) << run.daemon.metrics();
  const RunResult check = run.sim.run({"sh", "-c", "promtool check metrics < " + path});
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.err.empty());
}

TEST_CASE("A uniform baseline raises no hotspot", "[analysis][integration]") {
  ScenarioRun run(scenario_yaml(""));
  const Series s = run.drive_for(4);
  const auto top = ranked(s, "infiniband_hotspot_score");
  REQUIRE(!top.empty());
  INFO(top.front().second);
  CHECK(top.front().first < 3.0);
}

namespace {
// The node_name and port labels of a series key.
std::pair<std::string, std::string> node_and_port(const std::string& key) {
  const std::regex re(R"re(node_name="([^"]*)".*,port="([^"]*)")re");
  std::smatch m;
  if (!std::regex_search(key, m, re)) return {};
  return {m[1], m[2]};
}
}  // namespace

TEST_CASE("A checkpoint incast: the storage path ranks first", "[analysis][integration]") {
  ScenarioRun run(
      "name: incast\nseed: 4\nfabric:\n  servers: 8\n  rails: 2\n  tiers: 2\n  radix: 8\n"
      "  storage_nodes: 2\nduration: 600\ntick: 1.0\neffects:\n  - type: allreduce\n"
      "    load: 0.5\n  - type: incast\n    load: 0.95\n    ratio: 0.6\n    spread: 0.5\n");
  const Series s = run.drive_for(5);
  const auto top = ranked(s, "infiniband_hotspot_score");
  REQUIRE(!top.empty());
  INFO(top.front().second);
  const auto [node, port] = node_and_port(top.front().second);
  // The culprit: a storage leaf port towards the storage nodes, or a spine
  // port towards the storage leaf.
  bool on_storage_path = node == "leaf-stor-01";
  for (const auto& [key, v] : s) {
    on_storage_path =
        on_storage_path || (key.rfind("infiniband_port_info{", 0) == 0 &&
                            key.find("node_name=\"" + node + "\"") != std::string::npos &&
                            key.find(",port=\"" + port + "\"") != std::string::npos &&
                            key.find("remote_node_name=\"leaf-stor-01\"") != std::string::npos);
  }
  CHECK(on_storage_path);
  CHECK(top.front().first > 3.0);
}

TEST_CASE("A cable with rising symbol errors stands out in the error rates",
          "[analysis][integration]") {
  ScenarioRun run(
      scenario_yaml("  - type: symbol_errors\n"
                    "    node: leaf-r1-01\n    port: 5\n"
                    "    rate: 5\n"));
  const Series first = run.drive_for(2);
  const Series later = run.drive_for(4);
  // The port whose symbol errors grew most is the bad cable.
  std::string worst;
  double most = 0;
  for (const auto& [key, v] : later) {
    if (key.rfind("infiniband_port_symbol_errors_total{", 0) != 0) continue;
    auto it = first.find(key);
    const double grew = v - (it == first.end() ? 0.0 : it->second);
    if (grew > most) {
      most = grew;
      worst = key;
    }
  }
  INFO(worst);
  CHECK(node_and_port(worst) == std::make_pair(std::string("leaf-r1-01"), std::string("5")));
  CHECK(most >= 5);
  // And its switch tops the per-switch error rate.
  const auto switches = ranked(later, "infiniband_switch_errors_per_second");
  REQUIRE(!switches.empty());
  CHECK(switches.front().second.find("node_name=\"leaf-r1-01\"") != std::string::npos);
}
