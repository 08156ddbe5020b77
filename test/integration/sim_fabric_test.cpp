// The simulated fabric itself, checked against the infiniband-diags tools
// (perfquery, smpquery, ibnetdiscover) as oracles.
#include "test/sim/sim_fabric.h"

#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using ibfx::test::FatTreeSpec;
using ibfx::test::SimFabric;
using ibfx::test::small_fat_tree;
using namespace std::chrono_literals;

// "PortXmitWait:....................4242" -> "4242"; "LinkState:......Down" -> "Down".
std::string field(const std::string& output, const std::string& name) {
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(name + ":")) continue;
    std::size_t pos = name.size() + 1;
    while (pos < line.size() && line[pos] == '.') ++pos;
    return line.substr(pos);
  }
  return {};
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH); }

// Any process whose command line mentions `text` (e.g. a fabric's temp dir).
bool any_process_mentions(const std::string& text) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(entry.path() / "cmdline", std::ios::binary);
    std::string args;
    char buf[4096];
    while (cmdline.read(buf, sizeof(buf)) || cmdline.gcount() > 0) {
      args.append(buf, static_cast<std::size_t>(cmdline.gcount()));
    }
    if (args.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string port_field(SimFabric& fabric, const std::string& node, int port,
                       const std::string& name) {
  const auto result = fabric.run(
      {"smpquery", "portinfo", std::to_string(fabric.lid_of(node)), std::to_string(port)});
  INFO(result.err);
  REQUIRE(result.ok());
  return field(result.out, name);
}

}  // namespace

TEST_CASE("SimFabric: a small fat tree comes up and ibnetdiscover sees every node", "[sim]") {
  const ibfx::test::Fabric layout = ibfx::test::make_fat_tree(small_fat_tree());
  SimFabric fabric(layout);
  CHECK(fabric.bringup_time() < 30s);
  CHECK(std::filesystem::is_directory(fabric.dir()));
  CHECK(fabric.env().at("IBSIM_SOCKNAME") == fabric.sockname());
  CHECK(fabric.env().at("LD_PRELOAD").find("umad2sim") != std::string::npos);

  const auto discovered = fabric.run({"ibnetdiscover"});
  REQUIRE(discovered.ok());
  const auto lids = ibfx::test::parse_ibnetdiscover_lids(discovered.out);
  CHECK(lids.size() == layout.nodes().size());
  for (const auto& node : layout.nodes()) {
    INFO(node.name);
    REQUIRE(lids.count(node.name) == 1);
    CHECK(lids.at(node.name) > 0);
    CHECK(fabric.lid_of(node.name) == lids.at(node.name));
  }
  CHECK_THROWS_AS(fabric.lid_of("no-such-node"), std::out_of_range);

  // Links carry the generated width/speed (4xHDR), not ibsim's 4xSDR default.
  CHECK(discovered.out.find("4xHDR") != std::string::npos);
  CHECK(discovered.out.find("4xSDR") == std::string::npos);
}

TEST_CASE("SimFabric: perf_set values read back with perfquery", "[sim]") {
  SimFabric fabric(small_fat_tree());
  fabric.perf_set("leaf-r0-01", 5, "PortXmitWait", 123456);
  fabric.perf_set("gpu0002 mlx5_1", 1, "PortCounters.SymbolErrorCounter", 17);
  fabric.perf_set("spine-01", 1, "PortCountersExtended.PortXmitData", 9876543210ULL);

  auto leaf = fabric.run({"perfquery", std::to_string(fabric.lid_of("leaf-r0-01")), "5"});
  REQUIRE(leaf.ok());
  CHECK(field(leaf.out, "PortXmitWait") == "123456");

  auto hca = fabric.run({"perfquery", std::to_string(fabric.lid_of("gpu0002 mlx5_1")), "1"});
  REQUIRE(hca.ok());
  CHECK(field(hca.out, "SymbolErrorCounter") == "17");

  auto spine = fabric.run({"perfquery", "-x", std::to_string(fabric.lid_of("spine-01")), "1"});
  REQUIRE(spine.ok());
  // ibsim counts the MADs that cross the port on top of the value set.
  const auto xmit_data = std::stoull(field(spine.out, "PortXmitData"));
  CHECK(xmit_data >= 9876543210ULL);
  CHECK(xmit_data < 9876543210ULL + 100000);

  // ibsim's own answer is returned by console().
  CHECK(fabric.console("PerformanceSet \"leaf-r0-01\"[6] PortCounters.PortXmitWait=5")
            .find("has been set to 5") != std::string::npos);
  CHECK_THROWS_AS(fabric.perf_set("leaf-r0-01", 5, "NoSuchCounter", 1), std::runtime_error);
  CHECK_THROWS_AS(fabric.perf_set("no-such-node", 1, "PortXmitWait", 1), std::runtime_error);
  CHECK_THROWS_AS(fabric.console(std::string(200, 'x')), std::invalid_argument);
  CHECK_THROWS_AS(fabric.console("Attached\nQuit"), std::invalid_argument);
}

TEST_CASE("SimFabric: unlink takes a port down, relink brings it back", "[sim]") {
  SimFabric fabric(small_fat_tree());
  REQUIRE(port_field(fabric, "leaf-r0-01", 1, "LinkState") == "Active");

  fabric.unlink("leaf-r0-01", 1);  // gpu0001 mlx5_0
  CHECK(port_field(fabric, "leaf-r0-01", 1, "LinkState") == "Down");
  CHECK(port_field(fabric, "leaf-r0-01", 1, "PhysLinkState") == "Polling");
  const auto after = fabric.lids(/*refresh=*/true);
  CHECK(after.count("gpu0001 mlx5_0") == 0);
  CHECK(after.count("gpu0002 mlx5_0") == 1);
  CHECK_THROWS_AS(fabric.unlink("leaf-r0-01", 1), std::runtime_error);  // not linked any more

  fabric.relink("leaf-r0-01", 1);
  CHECK(port_field(fabric, "leaf-r0-01", 1, "PhysLinkState") == "LinkUp");
  // The relinked port starts in Init; opensm activates it on the trap ibsim
  // sends (or its next sweep).
  std::string state;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((state = port_field(fabric, "leaf-r0-01", 1, "LinkState")) != "Active" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  CHECK(state == "Active");

  fabric.error_rate("leaf-r0-01", 2, 0);
  CHECK_THROWS_AS(fabric.error_rate("leaf-r0-01", 2, 101), std::invalid_argument);
}

TEST_CASE("SimFabric: two instances run independently", "[sim]") {
  // The second one is built on a thread that ends before it is used: its
  // processes must survive that thread (they are forked from a process-wide
  // spawner thread, see PR_SET_PDEATHSIG in sim_fabric.cpp).
  std::unique_ptr<SimFabric> b;
  std::thread builder([&] { b = std::make_unique<SimFabric>(small_fat_tree()); });
  SimFabric a(small_fat_tree());
  builder.join();
  REQUIRE(b);
  CHECK(a.sockname() != b->sockname());
  CHECK(a.dir() != b->dir());

  a.perf_set("leaf-r1-01", 5, "PortXmitWait", 111);
  b->perf_set("leaf-r1-01", 5, "PortXmitWait", 222);
  const auto read = [](SimFabric& f) {
    const auto r = f.run({"perfquery", std::to_string(f.lid_of("leaf-r1-01")), "5"});
    REQUIRE(r.ok());
    return field(r.out, "PortXmitWait");
  };
  CHECK(read(a) == "111");
  CHECK(read(*b) == "222");

  // Taking a link down in one does not touch the other.
  a.unlink("leaf-r1-01", 2);
  CHECK(port_field(a, "leaf-r1-01", 2, "LinkState") == "Down");
  CHECK(port_field(*b, "leaf-r1-01", 2, "LinkState") == "Active");
}

TEST_CASE("SimFabric: destruction leaves no processes and no temp dir", "[sim]") {
  pid_t ibsim = -1, opensm = -1, child = -1;
  std::string dir;
  {
    SimFabric fabric(small_fat_tree());
    ibsim = fabric.ibsim_pid();
    opensm = fabric.opensm_pid();
    dir = fabric.dir();
    auto& sleeper = fabric.spawn({"sleep", "300"}, {{"IBFX_TEST_MARKER", "1"}});
    child = sleeper.pid();
    REQUIRE(process_alive(ibsim));
    REQUIRE(process_alive(opensm));
    REQUIRE(sleeper.running());
    REQUIRE(any_process_mentions(dir));
  }
  CHECK_FALSE(process_alive(ibsim));
  CHECK_FALSE(process_alive(opensm));
  CHECK_FALSE(process_alive(child));
  CHECK_FALSE(any_process_mentions(dir));
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("SimFabric: a REQUIRE failure unwinds and tears down", "[sim]") {
  std::string dir;
  try {
    SimFabric fabric(small_fat_tree());
    dir = fabric.dir();
    throw std::runtime_error("simulated test failure");  // what REQUIRE does on failure
  } catch (const std::runtime_error&) {
  }
  REQUIRE_FALSE(dir.empty());
  CHECK_FALSE(any_process_mentions(dir));
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("SimFabric: spawned clients run in the temp dir under the preload", "[sim]") {
  SimFabric fabric(small_fat_tree());
  auto& child = fabric.spawn({"sh", "-c", "echo \"$IBSIM_SOCKNAME $LD_PRELOAD $EXTRA\"; pwd"},
                             {{"EXTRA", "extra-value"}});
  REQUIRE(child.wait(10s) == 0);
  const std::string out = child.read_stdout();
  CHECK(out.find(fabric.sockname()) != std::string::npos);
  CHECK(out.find("umad2sim") != std::string::npos);
  CHECK(out.find("extra-value") != std::string::npos);
  CHECK(out.find(fabric.dir()) != std::string::npos);

  // run() reports exit codes and enforces its timeout.
  CHECK(fabric.run({"sh", "-c", "exit 3"}).exit_code == 3);
  const auto slow = fabric.run({"sleep", "30"}, 200ms);
  CHECK(slow.timed_out);
  CHECK_FALSE(slow.ok());
  CHECK_THROWS_AS(fabric.run({"/no/such/program"}), std::runtime_error);
}

TEST_CASE("SimFabric: irregular topologies are accepted by ibsim and opensm", "[sim]") {
  ibfx::test::RingSpec ring;
  ring.switches = 4;
  ring.servers = 6;
  ring.radix = 8;
  ibfx::test::SingleSwitchSpec single;
  single.servers = 3;
  single.rails = 2;
  single.radix = 8;
  ibfx::test::IrregularSpec irregular;
  irregular.seed = 5;
  FatTreeSpec three_tier;
  three_tier.servers = 6;
  three_tier.rails = 2;
  three_tier.tiers = 3;
  three_tier.radix = 8;
  three_tier.storage_nodes = 2;

  const std::vector<std::pair<std::string, ibfx::test::Fabric>> fabrics = {
      {"ring", ibfx::test::make_ring(ring)},
      {"single", ibfx::test::make_single_switch(single)},
      {"irregular", ibfx::test::make_irregular(irregular)},
      {"3-tier", ibfx::test::make_fat_tree(three_tier)},
  };
  for (const auto& [name, layout] : fabrics) {
    INFO(name);
    SimFabric fabric(layout);
    const auto lids = fabric.lids();
    for (const auto& node : layout.nodes()) {
      // An HCA displaced by the miscabled one has no cable and is invisible.
      const bool cabled = std::any_of(node.ports.begin(), node.ports.end(),
                                      [](const auto& peer) { return peer.connected(); });
      CHECK(lids.count(node.name) == (cabled ? 1U : 0U));
    }
    if (!layout.miscabled_hca.empty()) {
      CHECK(lids.at(layout.miscabled_hca) > 0);
    }
  }
}

TEST_CASE("SimFabric: without opensm only the simulator runs", "[sim]") {
  ibfx::test::SimOptions options;
  options.opensm = false;
  SimFabric fabric(small_fat_tree(), options);
  CHECK(fabric.opensm_pid() == -1);
  // Direct-routed discovery works without an SM, but nothing has a LID.
  const auto lids = fabric.lids();
  CHECK(lids.size() == 13);
  CHECK(lids.at("leaf-r0-01") == 0);
  fabric.perf_set("leaf-r0-01", 5, "PortXmitWait", 1);
}

TEST_CASE("SimFabric: bring-up failures throw with the simulator's log", "[sim]") {
  // A link listed from one end only: ibsim refuses the file.
  const std::string broken = "Switch 8 \"sw\"\n[1] \"hca\"[1]\n\nHca 1 \"hca\"\n[1] \"sw\"[2]\n\n";
  try {
    SimFabric fabric(broken);
    FAIL("ibsim accepted a broken net file");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("ibsim exited") != std::string::npos);
    CHECK(what.find("ibsim.err") != std::string::npos);
  }
}

TEST_CASE("SimFabric: bring-up timeout throws with the logs and cleans up", "[sim]") {
  ibfx::test::SimOptions options;
  options.timeout = 20ms;
  std::string what;
  try {
    SimFabric fabric(small_fat_tree(), options);
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  REQUIRE(what.starts_with("SimFabric ("));
  CHECK(what.find(" after 20 ms") != std::string::npos);
  const std::string dir = what.substr(11, what.find(')') - 11);
  CHECK_FALSE(any_process_mentions(dir));
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("SimFabric: a named probe switch fills the LID map during bring-up", "[sim]") {
  ibfx::test::SimOptions options;
  options.probe_switch = "spine-02";
  SimFabric fabric(small_fat_tree(), options);
  CHECK(fabric.lids().size() == 13);
  CHECK(fabric.lid_of("spine-02") > 0);
}

#ifdef IBFX_FABRICGEN_PATH
TEST_CASE("ibfx-fabricgen: output is accepted by ibsim, bad arguments exit 2", "[sim]") {
  const std::string tool = IBFX_FABRICGEN_PATH;
  const std::string tmp = std::filesystem::temp_directory_path().string();
  auto run_tool = [&](std::vector<std::string> args) {
    args.insert(args.begin(), tool);
    ibfx::test::Process::Spec spec;
    spec.argv = args;
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    spec.stdout_path = tmp + "/ibfx-fabricgen-test-" + std::to_string(::getpid()) + ".out";
    spec.stderr_path = spec.stdout_path + ".err";
    auto process = ibfx::test::Process::start(spec);
    const auto code = process.wait(30s);
    const std::string out = process.read_stdout() + process.read_stderr();
    std::filesystem::remove(spec.stdout_path);
    std::filesystem::remove(spec.stderr_path);
    return std::make_pair(code.value_or(-1), out);
  };

  CHECK(run_tool({"--radix", "7"}).first == 2);
  CHECK(run_tool({"--servers", "0"}).first == 2);
  CHECK(run_tool({"--tiers", "4"}).first == 2);
  CHECK(run_tool({"--topology", "mesh"}).first == 2);
  CHECK(run_tool({"--bogus"}).first == 2);
  CHECK(run_tool({"--preset", "16k", "--tiers", "2"}).first == 2);  // too wide for 2 tiers

  const auto sizes = run_tool({"--preset", "16k", "--print-sizes"});
  CHECK(sizes.first == 0);
  CHECK(sizes.second.starts_with("-N "));
  CHECK(sizes.second.find(" -S ") != std::string::npos);
  CHECK(sizes.second.find(" -P ") != std::string::npos);

  const auto net = run_tool(
      {"--topology", "irregular", "--servers", "6", "--rails", "2", "--radix", "8", "--seed", "3"});
  REQUIRE(net.first == 0);
  SimFabric fabric(net.second);
  CHECK(fabric.lids().size() == 6 * 2 + 1 + 4 + 4);  // HCAs, mgmt, leaves, spines
}
#endif
