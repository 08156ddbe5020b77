#include "test/scenario/scenario.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using ibfx::test::EffectType;
using ibfx::test::Scenario;
using ibfx::test::ScenarioDriver;

// The small fabric every test uses: 16 servers x 4 rails, radix 16 (8 rail
// leaves + leaf-stor-01, 8 spines, spine-03 port 5 faces leaf-r2-01).
const std::string kFabric =
    "fabric: {servers: 16, rails: 4, tiers: 2, radix: 16, storage_nodes: 2}\n";

Scenario parse_body(const std::string& body) { return ibfx::test::parse_scenario(kFabric + body); }

// The counter values a command stream sets, read back the way ibsim would.
struct Stream {
  // ("node", port, "PortCounters.PortXmitWait") -> value after each tick
  // that set it, with the tick index.
  std::map<std::tuple<std::string, int, std::string>,
           std::vector<std::pair<std::size_t, std::uint64_t>>>
      sets;
  std::vector<std::pair<std::size_t, std::string>> links;  // (tick, "Unlink "node"[port]")
  std::vector<std::size_t> lines_per_tick;
  std::vector<std::string> bad_lines;

  void add(std::size_t tick, const std::vector<std::string>& lines) {
    static const std::regex perf(R"re(^PerformanceSet "([^"]+)"\[(\d+)\] ([A-Za-z.]+)=(\d+)$)re");
    static const std::regex link(R"re(^(Unlink|ReLink) "[^"]+"\[\d+\]$)re");
    lines_per_tick.push_back(lines.size());
    for (const std::string& line : lines) {
      std::smatch m;
      if (line.size() > 120) {
        bad_lines.push_back(line);
      } else if (std::regex_match(line, m, perf)) {
        sets[{m[1], std::stoi(m[2]), m[3]}].emplace_back(tick, std::stoull(m[4]));
      } else if (std::regex_match(line, link)) {
        links.emplace_back(tick, line);
      } else {
        bad_lines.push_back(line);
      }
    }
  }

  const std::vector<std::pair<std::size_t, std::uint64_t>>& of(const std::string& node, int port,
                                                               const std::string& counter) const {
    static const std::vector<std::pair<std::size_t, std::uint64_t>> none;
    const auto it = sets.find({node, port, counter});
    return it == sets.end() ? none : it->second;
  }
};

Stream run_ticks(ScenarioDriver& driver, std::size_t ticks) {
  Stream stream;
  for (std::size_t i = 0; i < ticks && !driver.done(); ++i) stream.add(i, driver.step());
  return stream;
}

// W between two pushes of PortXmitWait (ticks of 1 s).
double ratio(const std::pair<std::size_t, std::uint64_t>& a,
             const std::pair<std::size_t, std::uint64_t>& b, double tick_ns) {
  return static_cast<double>(b.second - a.second) * tick_ns * 1e-9 /
         static_cast<double>(b.first - a.first);
}

void require_error(const std::string& body, const std::string& expected) {
  INFO(body);
  try {
    parse_body(body);
    FAIL("no error, expected: " << expected);
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains(expected));
  }
}

}  // namespace

TEST_CASE("Every scenario file in test/scenarios loads and runs", "[scenario]") {
  const std::filesystem::path dir = std::filesystem::path(IBFX_SOURCE_DIR) / "test/scenarios";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path());
    ++files;
    ScenarioDriver driver(ibfx::test::load_scenario(entry.path().string()));
    const Stream stream = run_ticks(driver, 5);
    CHECK(stream.bad_lines.empty());
    CHECK(stream.lines_per_tick.size() == 5);
  }
  CHECK(files >= 6);

  const Scenario demo =
      ibfx::test::load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/demo.yaml");
  CHECK(demo.name == "demo");
  CHECK(demo.fabric.servers == 16);
  CHECK(demo.fabric.rails == 4);
  CHECK(demo.fabric.storage_nodes == 2);
  CHECK(demo.max_commands_per_tick == 400);
  REQUIRE(demo.effects.size() == 4);
  CHECK(demo.effects[2].type == EffectType::kCongestionTree);
  CHECK(demo.effects[2].node == "leaf-r2-01");
  CHECK(demo.effects[2].port == 1);
  CHECK(demo.effects[2].end == demo.duration);  // end defaults to the duration
}

TEST_CASE("Scenario defaults", "[scenario]") {
  const Scenario s = parse_body("effects:\n  - type: allreduce\n");
  CHECK(s.seed == 1);
  CHECK(s.tick == 1.0);
  CHECK(s.time_scale == 1.0);
  CHECK(s.xmit_wait_tick_ns == ibfx::test::kDefaultXmitWaitTickNs);
  CHECK(s.max_commands_per_tick == 0);
  REQUIRE(s.effects.size() == 1);
  CHECK(s.effects[0].load == 0.5);
  CHECK(s.effects[0].start == 0);
  CHECK(s.effects[0].end == s.duration);
  CHECK(s.effects[0].line == 3);
}

TEST_CASE("Scenario validation names file, line and key", "[scenario]") {
  // Line numbers count the fabric line prepended by parse().
  require_error("effects:\n  - type: allgather\n",
                "<string>:3: type: unknown effect \"allgather\"");
  require_error("effects:\n  - {type: congested_port, node: spine-99, port: 5}\n",
                "<string>:3: congested_port.node: unknown node \"spine-99\"");
  require_error("effects:\n  - {type: congested_port, node: spine-03, port: 17}\n",
                "<string>:3: congested_port.port: \"spine-03\" has ports 1..16 (got 17)");
  require_error("effects:\n  - {type: congested_port, node: spine-03, port: 15}\n",
                "congested_port.port: \"spine-03\"[15] is not cabled");
  require_error("effects:\n  - {type: congested_port, node: gpu0001 mlx5_0, port: 1}\n",
                "congested_port.node: \"gpu0001 mlx5_0\" is not a switch");
  require_error("effects:\n  - {type: congested_port, node: spine-03}\n",
                "congested_port.port: missing");
  require_error("effects:\n  - {type: symbol_errors, port: 1}\n", "symbol_errors.node: missing");
  require_error("effects:\n  - {type: symbol_errors, node: leaf-r0-01, port: x1}\n",
                "symbol_errors.port: not an integer: \"x1\"");
  require_error("effects:\n  - {type: symbol_errors, node: leaf-r0-01, port: 1, rate: -1}\n",
                "symbol_errors.rate: must be in [0, 1e+09]");
  require_error("effects:\n  - {type: incast, targets: [stor09 mlx5_0]}\n",
                "incast.targets: unknown node \"stor09 mlx5_0\"");
  require_error("effects:\n  - {type: incast, targets: leaf-stor-01}\n",
                "incast.targets: \"leaf-stor-01\" is a switch, not an HCA");
  require_error("effects:\n  - {type: allreduce, load: 1.5}\n",
                "<string>:3: allreduce.load: must be in [0, 1] (got 1.5)");
  require_error("effects:\n  - {type: allreduce, load: high}\n",
                "allreduce.load: not a number: \"high\"");
  require_error("effects:\n  - {type: allreduce, lod: 0.5}\n",
                "<string>:3: allreduce.lod: unknown key");
  require_error("effects:\n  - {type: allreduce, start: 30, end: 20}\n",
                "allreduce.end: must be after start (30)");
  require_error("duration: 100\neffects:\n  - {type: allreduce, start: 100}\n",
                "allreduce.start: must be before the end of the scenario");
  require_error("duration: 100\neffects:\n  - {type: allreduce, end: 200}\n",
                "<string>:4: allreduce.end: must be in [0, 100]");
  require_error(
      "effects:\n  - {type: flap, node: leaf-r0-01, port: 1, period: 10, down_time: 10}\n",
      "flap.down_time: must be shorter than period (10)");
  require_error("effects:\n  - {type: flap, node: leaf-r0-01, port: 1, period: 0}\n",
                "flap.period: must be > 0");
  require_error("effects:\n  - allreduce\n", "<string>:3: effects: expected a map with a type");
  require_error("effects:\n  - {load: 1}\n", "effects: effect without a type");
  require_error("effects: allreduce\n", "<string>:2: effects: expected a list of effects");
  require_error("duration: -5\n", "<string>:2: duration: must be > 0 (got -5)");
  require_error("duration: 5m\n", "<string>:2: duration: not a number: \"5m\"");
  require_error("tick: 0\n", "tick: must be > 0");
  require_error("duration: 10\ntick: 20\n", "<string>:3: tick: longer than duration (10)");
  require_error("xmit_wait_tick_ns: -4\n", "xmit_wait_tick_ns: must be > 0");
  require_error("seed: -1\n", "seed: not a non-negative integer: \"-1\"");
  require_error("max_commands_per_tick: 1.5\n",
                "max_commands_per_tick: not a non-negative integer");
  require_error("durration: 10\n", "<string>:2: durration: unknown key");
  require_error("duration: [1, 2]\n", "duration: expected a number");
  require_error("effects:\n  - {type: allreduce\n", "yaml:");

  auto fabric_error = [](const std::string& yaml, const std::string& expected) {
    INFO(yaml);
    CHECK_THROWS_WITH(ibfx::test::parse_scenario(yaml), Catch::Contains(expected));
  };
  fabric_error("duration: 10\n", "<string>:1: fabric: missing");
  fabric_error("fabric: {servers: 4, rails: 2, radix: 15}\n",
               "<string>:1: fabric: radix must be even");
  fabric_error("fabric: {servers: 4, rails: 2, radix: 8, racks: 2}\n",
               "<string>:1: fabric.racks: unknown key");
  fabric_error("fabric: {servers: four}\n", "fabric.servers: not an integer: \"four\"");
  fabric_error("fabric: {servers: 4, rails: 2, radix: 8}\neffects:\n  - {type: incast}\n",
               "<string>:3: incast.targets: no targets and the fabric has no storage nodes");
  fabric_error("[1, 2]\n", "<string>:1: scenario: expected a map");

  CHECK_THROWS_WITH(ibfx::test::load_scenario("/nonexistent/scenario.yaml"),
                    Catch::Contains("/nonexistent/scenario.yaml: cannot open"));
}

TEST_CASE("Same seed gives the same command stream, another seed another", "[scenario]") {
  const std::string body =
      "seed: 11\nduration: 60\nmax_commands_per_tick: 150\neffects:\n"
      "  - {type: allreduce, load: 0.6}\n  - {type: cross_rail, load: 0.3}\n"
      "  - {type: congested_port, node: spine-03, port: 5, start: 10}\n"
      "  - {type: flap, node: leaf-r0-01, port: 9, period: 20, down_time: 3}\n";
  auto stream = [](const std::string& text) {
    ScenarioDriver driver(parse_body(text));
    std::vector<std::string> all;
    while (!driver.done()) {
      for (std::string& line : driver.step()) all.push_back(std::move(line));
      all.push_back("--");
    }
    return all;
  };
  const auto a = stream(body);
  const auto b = stream(body);
  CHECK(a.size() > 1000);
  CHECK(a == b);
  std::string other = body;
  other.replace(other.find("seed: 11"), 8, "seed: 12");
  CHECK(stream(other) != a);
}

TEST_CASE("The congested port's PortXmitWait rises at the configured ratio", "[scenario]") {
  ScenarioDriver driver(parse_body(
      "duration: 40\nmax_commands_per_tick: 100\neffects:\n"
      "  - {type: allreduce, load: 0.6}\n  - {type: cross_rail, load: 0.3}\n"
      "  - {type: congested_port, node: spine-03, port: 5, ratio: 0.7, spread: 0.3, start: 10, "
      "end: 30}\n"));
  const double tick_ns = driver.scenario().xmit_wait_tick_ns;
  const Stream stream = run_ticks(driver, 40);
  CHECK(stream.bad_lines.empty());

  // The culprit is pushed every tick of the effect, whatever the budget.
  const auto& culprit = stream.of("spine-03", 5, "PortCounters.PortXmitWait");
  std::vector<std::pair<std::size_t, std::uint64_t>> during;
  for (const auto& v : culprit) {
    if (v.first >= 10 && v.first < 30) during.push_back(v);
  }
  REQUIRE(during.size() == 20);
  for (std::size_t i = 1; i < during.size(); ++i) {
    CHECK(ratio(during[i - 1], during[i], tick_ns) == Approx(0.7).epsilon(1e-6));
  }
  // Before it, the spine port only carries the cross-rail background (~2 %).
  REQUIRE(!culprit.empty());
  CHECK(culprit.front().first >= 1);
  CHECK(static_cast<double>(during.front().second) * tick_ns * 1e-9 / 10 < 0.1);

  const auto culprits = driver.expected_culprits();
  REQUIRE(culprits.size() == 1);
  CHECK(culprits[0].node == "spine-03");
  CHECK(culprits[0].port == 5);
  CHECK(culprits[0].counter == "PortXmitWait");
  CHECK(culprits[0].value == 0.7);
  CHECK(culprits[0].start == 10);
  CHECK(culprits[0].end == 30);

  // Spread: every switch port into spine-03 (here the leaf uplinks) at 0.21;
  // other spines are untouched.
  CHECK(driver.expected_wait_ratio("spine-03", 5, 15) == 0.7);
  CHECK(driver.expected_wait_ratio("spine-03", 5, 35) == 0.02);             // cross_rail background
  CHECK(driver.expected_wait_ratio("leaf-r0-01", 11, 15) == Approx(0.21));  // -> spine-03 port 1
  CHECK(driver.expected_wait_ratio("leaf-r2-01", 11, 15) == Approx(0.21));
  CHECK(driver.expected_wait_ratio("leaf-r0-01", 10, 15) == 0.02);  // -> spine-02
  CHECK(driver.expected_wait_ratio("spine-03", 4, 15) == 0.02);
  const auto& feeder = stream.of("leaf-r0-01", 11, "PortCounters.PortXmitWait");
  std::vector<std::pair<std::size_t, std::uint64_t>> feeder_during;
  for (const auto& v : feeder) {
    if (v.first >= 10 && v.first < 30) feeder_during.push_back(v);
  }
  REQUIRE(feeder_during.size() == 20);
  CHECK(ratio(feeder_during.front(), feeder_during.back(), tick_ns) == Approx(0.21).epsilon(1e-6));
  CHECK_THROWS_AS(driver.expected_wait_ratio("spine-03", 15, 0), std::out_of_range);
}

TEST_CASE("Incast stalls the storage leaf ports and spreads upstream", "[scenario]") {
  ScenarioDriver driver(
      parse_body("duration: 20\neffects:\n  - {type: allreduce}\n"
                 "  - {type: incast, start: 5, end: 15, ratio: 0.6, spread: 0.5}\n"));
  const double tick_ns = driver.scenario().xmit_wait_tick_ns;
  const auto culprits = driver.expected_culprits();
  REQUIRE(culprits.size() == 2);
  CHECK(culprits[0].node == "leaf-stor-01");
  CHECK(culprits[0].port == 1);
  CHECK(culprits[1].port == 2);
  // leaf-stor-01 is the 9th leaf: spine s port 9 faces it.
  CHECK(driver.expected_wait_ratio("spine-01", 9, 10) == 0.6);
  CHECK(driver.expected_wait_ratio("spine-08", 9, 10) == 0.6);
  CHECK(driver.expected_wait_ratio("leaf-r0-01", 9, 10) == Approx(0.3));  // into spine-01
  CHECK(driver.expected_wait_ratio("leaf-r0-01", 1, 10) == 0.02);         // allreduce only

  const Stream stream = run_ticks(driver, 20);
  const auto& v = stream.of("leaf-stor-01", 1, "PortCounters.PortXmitWait");
  REQUIRE(v.size() == 10);
  CHECK(v.front().first == 5);
  CHECK(ratio(v.front(), v.back(), tick_ns) == Approx(0.6).epsilon(1e-6));
  // The storage port carries the incast load (0.9 of line rate by default).
  const auto& data = stream.of("leaf-stor-01", 1, "PortCountersExtended.PortXmitData");
  REQUIRE(!data.empty());
  CHECK(static_cast<double>(data.back().second) * 4 == Approx(0.9 * 25e9 * 10).epsilon(1e-6));
  CHECK(stream.of("stor01 mlx5_0", 1, "PortCountersExtended.PortRcvData").back().second ==
        data.back().second);
}

TEST_CASE("Baseline traffic leaves every port below a small W", "[scenario]") {
  Scenario s =
      ibfx::test::load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/baseline.yaml");
  s.duration = 60;
  ScenarioDriver driver(s);
  const Stream stream = run_ticks(driver, 60);
  CHECK(stream.bad_lines.empty());
  double max_w = 0;
  std::size_t wait_ports = 0;
  for (const auto& [key, values] : stream.sets) {
    const auto& [node, port, counter] = key;
    if (counter != "PortCounters.PortXmitWait") continue;
    ++wait_ports;
    std::pair<std::size_t, std::uint64_t> previous{static_cast<std::size_t>(-1), 0};
    for (const auto& v : values) {
      // The first push covers ticks 0..v.first.
      const double w = static_cast<double>(v.second - previous.second) * s.xmit_wait_tick_ns *
                       1e-9 / static_cast<double>(v.first - previous.first);
      max_w = std::max(max_w, w);
      previous = v;
    }
  }
  CHECK(wait_ports == 128);  // 64 server HCAs + their 64 leaf ports
  CHECK(max_w > 0.015);
  CHECK(max_w < 0.03);
  CHECK(driver.expected_culprits().empty());
  // Load 0.7 +- 5 % of 25e9 bytes/s: PortXmitData in words.
  const auto& data = stream.of("gpu0001 mlx5_0", 1, "PortCountersExtended.PortXmitData");
  REQUIRE(data.size() == 60);
  const double bytes_per_s = static_cast<double>(data.back().second) * 4 / 60;
  CHECK(bytes_per_s > 0.65 * 25e9);
  CHECK(bytes_per_s < 0.75 * 25e9);
  // Ports nothing touches are never pushed.
  CHECK(stream.of("spine-01", 1, "PortCountersExtended.PortXmitData").empty());
  CHECK(stream.of("mgmt01 mlx5_0", 1, "PortCountersExtended.PortXmitData").empty());
}

TEST_CASE("PortXmitWait saturates at 2^32-1 like a 32-bit hardware counter", "[scenario]") {
  // 1 ns ticks: W = 0.7 is 7e8 ticks/s, past 2^32 after ~6.1 s.
  ScenarioDriver driver(
      parse_body("duration: 12\nxmit_wait_tick_ns: 1\neffects:\n"
                 "  - {type: congested_port, node: spine-03, port: 5, ratio: 0.7}\n"));
  const Stream stream = run_ticks(driver, 12);
  const auto& v = stream.of("spine-03", 5, "PortCounters.PortXmitWait");
  REQUIRE(v.size() == 7);  // ticks 0..6; then the value no longer changes
  CHECK(v[5].second == 6 * 700000000ULL);
  CHECK(v[6].second == ibfx::test::kXmitWaitMax);
  CHECK(v[6].first == 6);
  // The model's own total keeps counting (ground truth for the tests).
  CHECK(driver.totals("spine-03", 5).xmit_wait == Approx(12 * 7e8).epsilon(1e-9));
}

TEST_CASE("Symbol errors count at fractional rates and saturate at 16 bits", "[scenario]") {
  ScenarioDriver slow(
      parse_body("duration: 10\neffects:\n"
                 "  - {type: symbol_errors, node: leaf-r1-02, port: 9, rate: 0.5}\n"));
  const Stream stream = run_ticks(slow, 10);
  const auto& v = stream.of("leaf-r1-02", 9, "PortCounters.SymbolErrorCounter");
  REQUIRE(v.size() == 5);  // 1 every 2 s
  CHECK(v.back().second == 5);
  // Only the named end counts: the errors are seen by its receiver.
  CHECK(stream.of("spine-01", 4, "PortCounters.SymbolErrorCounter").empty());
  const auto culprits = slow.expected_culprits();
  REQUIRE(culprits.size() == 1);
  CHECK(culprits[0].counter == "SymbolErrorCounter");
  CHECK(culprits[0].node == "leaf-r1-02");

  ScenarioDriver fast(
      parse_body("duration: 10\neffects:\n"
                 "  - {type: symbol_errors, node: leaf-r1-02, port: 9, rate: 10000}\n"));
  const Stream burst = run_ticks(fast, 10);
  CHECK(burst.of("leaf-r1-02", 9, "PortCounters.SymbolErrorCounter").back().second == 65535);
  CHECK(fast.totals("leaf-r1-02", 9).symbol_errors == 100000);
}

TEST_CASE("A flap emits Unlink/ReLink pairs and counts LinkDowned on both ends", "[scenario]") {
  ScenarioDriver driver(parse_body(
      "duration: 100\neffects:\n  - {type: allreduce}\n"
      "  - {type: flap, node: gpu0003 mlx5_1, port: 1, period: 30, down_time: 5, start: 20}\n"));
  const Stream stream = run_ticks(driver, 100);
  // Downs at 20, 50, 80; ups 5 s later.
  REQUIRE(stream.links.size() == 6);
  for (std::size_t i = 0; i < stream.links.size(); i += 2) {
    CHECK(stream.links[i].second == "Unlink \"gpu0003 mlx5_1\"[1]");
    CHECK(stream.links[i + 1].second == "ReLink \"gpu0003 mlx5_1\"[1]");
    CHECK(stream.links[i].first == 20 + 15 * i);
    CHECK(stream.links[i + 1].first == stream.links[i].first + 4);  // ReLink at 25: tick 24..25
  }
  const auto& hca = stream.of("gpu0003 mlx5_1", 1, "PortCounters.LinkDownedCounter");
  const auto& leaf = stream.of("leaf-r1-01", 3, "PortCounters.LinkDownedCounter");
  REQUIRE(hca.size() == 3);
  REQUIRE(leaf.size() == 3);
  CHECK(hca.back().second == 3);
  CHECK(leaf.back().second == 3);
  // No data while the link is down (ticks 20..24): the counter stays put.
  const auto& data = stream.of("gpu0003 mlx5_1", 1, "PortCountersExtended.PortXmitData");
  for (const auto& v : data) {
    CHECK_FALSE((v.first >= 21 && v.first <= 23));
  }
  CHECK(driver.expected_culprits().size() == 2);

  // Stopped while down: cleanup() brings the link back.
  ScenarioDriver stopped(
      parse_body("duration: 100\neffects:\n  - {type: flap, node: leaf-r0-01, port: 9, period: 30, "
                 "down_time: 10}\n"));
  const auto first = stopped.step();
  REQUIRE(!first.empty());
  CHECK(first.front() == "Unlink \"leaf-r0-01\"[9]");
  const auto relink = stopped.cleanup();
  REQUIRE(relink.size() == 1);
  CHECK(relink[0] == "ReLink \"leaf-r0-01\"[9]");
  CHECK(stopped.cleanup().empty());
}

TEST_CASE("max_commands_per_tick subsamples background ports round-robin", "[scenario]") {
  ScenarioDriver driver(
      parse_body("duration: 30\nmax_commands_per_tick: 100\neffects:\n  - {type: allreduce}\n"
                 "  - {type: cross_rail}\n"
                 "  - {type: congested_port, node: spine-03, port: 5, start: 10}\n"));
  const Stream stream = run_ticks(driver, 30);
  for (std::size_t lines : stream.lines_per_tick) CHECK(lines <= 100 + 5);  // + the hot port
  // 128 allreduce + 144 cross-rail port ends: every one is pushed at some point.
  std::map<std::pair<std::string, int>, int> pushed;
  for (const auto& [key, values] : stream.sets) {
    if (std::get<2>(key) == "PortCountersExtended.PortXmitData") {
      pushed[{std::get<0>(key), std::get<1>(key)}] = static_cast<int>(values.size());
    }
  }
  CHECK(pushed.size() == 128 + 144);
  CHECK(stream.of("spine-03", 5, "PortCounters.PortXmitWait").size() >= 20);  // every tick from 10
  // A port that was skipped catches up with its absolute total.
  const auto& data = stream.of("gpu0001 mlx5_0", 1, "PortCountersExtended.PortXmitData");
  REQUIRE(!data.empty());
  CHECK(data.size() < 30);
  CHECK(data.back().second <= driver.totals("gpu0001 mlx5_0", 1).xmit_words);
  CHECK(static_cast<double>(data.back().second) * 4 ==
        Approx(0.5 * 25e9 * static_cast<double>(data.back().first + 1)).epsilon(0.05));
}

TEST_CASE("Effects partly overlapping a tick count their share", "[scenario]") {
  ScenarioDriver driver(
      parse_body("duration: 4\nxmit_wait_tick_ns: 1000\neffects:\n"
                 "  - {type: congested_port, node: spine-03, port: 5, ratio: 0.5, start: 1.5, "
                 "end: 3.25}\n"));
  run_ticks(driver, 4);
  // 1.75 s at W = 0.5 with 1 us ticks.
  CHECK(driver.totals("spine-03", 5).xmit_wait == 875000);
  CHECK(driver.time() == 4);
  CHECK(driver.done());
  CHECK(driver.step().empty());
}
