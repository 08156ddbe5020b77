// The route reader on a simulated fabric (ibsim + opensm): the forwarding
// tables a SweepStage reads (test/support/route_dump_main.cpp, under
// umad2sim like the daemon's MAD worker) equal what ibroute, the
// infiniband-diags oracle, dumps of every switch, entry for entry.
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test/sim/fabric_gen.h"
#include "test/sim/sim_fabric.h"

namespace {

using ibfx::test::FatTreeSpec;
using ibfx::test::SimFabric;

using Table = std::map<int, int>;  // destination LID -> out port, valid entries only

// ibroute's lines "0x0005 003 : ..." (LID in hex, port in decimal); it
// leaves out the entries that forward nowhere (0xFF) unless asked (-a).
Table parse_ibroute(const std::string& text) {
  Table table;
  static const std::regex line(R"(^0x([0-9a-fA-F]+) +([0-9]+) )");
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    std::smatch m;
    if (std::regex_search(l, m, line)) {
      table[std::stoi(m[1].str(), nullptr, 16)] = std::stoi(m[2].str());
    }
  }
  return table;
}

// ibfx_route_dump's "switch <lid> top <top> stale <0|1>" then "<lid> <port>".
std::map<int, Table> parse_dump(const std::string& text, std::map<int, int>& tops) {
  std::map<int, Table> tables;
  std::istringstream in(text);
  std::string l;
  Table* current = nullptr;
  while (std::getline(in, l)) {
    std::istringstream words(l);
    std::string first;
    words >> first;
    if (first == "switch") {
      int lid = 0, top = 0, stale = 0;
      std::string w1, w2;
      words >> lid >> w1 >> top >> w2 >> stale;
      current = &tables[lid];
      tops[lid] = top;
      CHECK(stale == 0);
    } else if (current != nullptr && !first.empty()) {
      int port = 0;
      words >> port;
      (*current)[std::stoi(first)] = port;
    }
  }
  return tables;
}

void check_against_ibroute(const FatTreeSpec& spec) {
  const ibfx::test::Fabric fabric = ibfx::test::make_fat_tree(spec);
  SimFabric sim(spec);
  std::vector<std::string> argv{IBFX_ROUTE_DUMP_PATH};
  std::vector<int> lids;
  for (const ibfx::test::FabricNode& n : fabric.nodes()) {
    if (!n.is_switch()) continue;
    lids.push_back(sim.lid_of(n.name));
    argv.push_back(std::to_string(lids.back()));
  }
  REQUIRE(lids.size() >= 2);
  const auto dump = sim.run(argv, std::chrono::seconds(60));
  INFO(dump.err);
  REQUIRE(dump.ok());
  WARN("route read of " << lids.size() << " switches: " << dump.err);
  std::map<int, int> tops;
  const std::map<int, Table> read = parse_dump(dump.out, tops);
  REQUIRE(read.size() == lids.size());
  int highest = 0;
  for (const auto& [name, lid] : sim.lids()) highest = std::max(highest, lid);
  for (const int lid : lids) {
    INFO("switch LID " << lid);
    const auto oracle = sim.run({"ibroute", "-n", std::to_string(lid)});
    INFO(oracle.err);
    REQUIRE(oracle.ok());
    const Table expected = parse_ibroute(oracle.out);
    REQUIRE(expected.size() >= lids.size());  // at least every switch is routed
    REQUIRE(read.count(lid) == 1);
    CHECK(read.at(lid) == expected);
    // opensm sizes each table to the highest LID it assigned.
    CHECK(tops.at(lid) >= highest);
  }
}

}  // namespace

TEST_CASE("Route reader: every switch's table equals ibroute's dump of it",
          "[route_reader][integration]") {
  check_against_ibroute(ibfx::test::small_fat_tree());
}

TEST_CASE("Route reader: a larger fat tree, tables over several LFT blocks",
          "[route_reader][integration]") {
  // 32 servers x 4 rails = 128 HCAs and 16+ switches: LIDs past 128, so
  // three blocks a table.
  check_against_ibroute(FatTreeSpec{.servers = 32, .rails = 4, .tiers = 2, .radix = 16});
}
