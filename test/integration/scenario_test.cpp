// The scenario driver against a real ibsim: its console lines are accepted
// and move the counters perfquery reads.
#include "test/scenario/scenario.h"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test/sim/sim_fabric.h"

namespace {

using ibfx::test::ScenarioDriver;
using ibfx::test::SimFabric;

// "PortXmitWait:....................4242" -> 4242; -1 if absent.
long long perf_field(const std::string& output, const std::string& name) {
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(name + ":")) continue;
    std::size_t pos = name.size() + 1;
    while (pos < line.size() && line[pos] == '.') ++pos;
    return std::stoll(line.substr(pos));
  }
  return -1;
}

// ibsim reports a rejected console line as a "# ..." comment.
void play(SimFabric& fabric, const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    const std::string answer = fabric.console(line);
    INFO(line << " -> " << answer);
    CHECK(answer.find("# ") == std::string::npos);
    if (line.starts_with("PerformanceSet"))
      CHECK(answer.find("has been set to") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("Scenario: driver commands move ibsim's counters", "[sim][scenario]") {
  // radix 8, 4 servers x 2 rails: leaf-r0-01, leaf-r1-01, spine-01/02
  // (spine port 1 faces leaf-r0-01).
  ScenarioDriver driver(ibfx::test::parse_scenario(
      "fabric: {servers: 4, rails: 2, tiers: 2, radix: 8}\n"
      "duration: 6\nmax_commands_per_tick: 40\neffects:\n"
      "  - {type: allreduce, load: 0.5}\n"
      "  - {type: congested_port, node: spine-01, port: 1, ratio: 0.7, start: 1}\n"
      "  - {type: symbol_errors, node: leaf-r1-01, port: 5, rate: 3}\n"
      "  - {type: flap, node: gpu0001 mlx5_0, port: 1, period: 4, down_time: 2, start: 1}\n"));
  SimFabric fabric(driver.fabric());

  std::vector<std::string> all;
  while (!driver.done()) {
    const auto lines = driver.step();
    play(fabric, lines);
    all.insert(all.end(), lines.begin(), lines.end());
  }
  play(fabric, driver.cleanup());

  // The culprit's PortXmitWait is what the driver pushed last: 5 s at 0.7.
  const auto spine = fabric.run({"perfquery", std::to_string(fabric.lid_of("spine-01")), "1"});
  REQUIRE(spine.ok());
  const long long wait = perf_field(spine.out, "PortXmitWait");
  CHECK(wait == static_cast<long long>(driver.totals("spine-01", 1).xmit_wait));
  CHECK(static_cast<double>(wait) * driver.scenario().xmit_wait_tick_ns * 1e-9 / 5 ==
        Approx(0.7).epsilon(1e-3));

  const auto leaf = fabric.run({"perfquery", std::to_string(fabric.lid_of("leaf-r1-01")), "5"});
  REQUIRE(leaf.ok());
  CHECK(perf_field(leaf.out, "SymbolErrorCounter") == 18);

  // Two flaps (down at 1 and 5, up at 3 and at the end, 6): the switch end
  // counts them.
  const auto flapped = fabric.run({"perfquery", std::to_string(fabric.lid_of("leaf-r0-01")), "1"});
  REQUIRE(flapped.ok());
  CHECK(perf_field(flapped.out, "LinkDownedCounter") == 2);
  int unlinks = 0, relinks = 0;
  for (const std::string& line : all) {
    unlinks += line.starts_with("Unlink") ? 1 : 0;
    relinks += line.starts_with("ReLink") ? 1 : 0;
  }
  CHECK(unlinks == 2);
  CHECK(relinks == 2);
  CHECK(driver.cleanup().empty());

  // Background data went through PortCountersExtended (ibsim adds its own
  // MADs on top of the value set, never less).
  const auto data =
      fabric.run({"perfquery", "-x", std::to_string(fabric.lid_of("leaf-r1-01")), "1"});
  REQUIRE(data.ok());
  CHECK(perf_field(data.out, "PortXmitData") > 1000000000LL);
}
