#include "test/sim/fabric_gen.h"

#include <catch2/catch.hpp>
#include <charconv>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "test/support/sanitized.h"

namespace {

using SimNet = ibfx::test::Fabric;  // not "Fabric": ibfx::Fabric is another type
using ibfx::test::FatTreeSpec;
using ibfx::test::NodeRole;

// The checks below read the generated net file back with their own parser
// rather than trusting the generator's in-memory graph: the file is what ibsim sees.
struct NetNode {
  bool is_switch = false;
  int num_ports = 0;
  std::map<int, std::pair<std::string, int>> links;  // local port -> remote node, port
};

struct Net {
  std::vector<std::string> order;
  std::map<std::string, NetNode> nodes;
  std::vector<std::string> errors;
};

std::string quoted(std::string_view line, std::size_t& pos) {
  const std::size_t q1 = line.find('"', pos);
  const std::size_t q2 = q1 == std::string_view::npos ? q1 : line.find('"', q1 + 1);
  if (q2 == std::string_view::npos) return {};
  pos = q2 + 1;
  return std::string(line.substr(q1 + 1, q2 - q1 - 1));
}

int number(std::string_view text, std::size_t& pos) {
  while (pos < text.size() && (text[pos] < '0' || text[pos] > '9')) ++pos;
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), value);
  pos = static_cast<std::size_t>(end - text.data());
  return ec == std::errc() ? value : -1;
}

Net parse_net(const std::string& text) {
  Net net;
  std::istringstream in(text);
  std::string line;
  NetNode* current = nullptr;
  std::string current_name;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      if (line.empty()) current = nullptr;
      continue;
    }
    std::size_t pos = 0;
    if (line.starts_with("Switch") || line.starts_with("Hca")) {
      NetNode node;
      node.is_switch = line.starts_with("Switch");
      node.num_ports = number(line, pos);
      current_name = quoted(line, pos);
      if (!net.nodes.emplace(current_name, node).second) {
        net.errors.push_back("duplicate node " + current_name);
      }
      net.order.push_back(current_name);
      current = &net.nodes[current_name];
    } else if (line[0] == '[') {
      if (current == nullptr) {
        net.errors.push_back("port line outside a record: " + line);
        continue;
      }
      const int port = number(line, pos);
      const std::string remote = quoted(line, pos);
      const int remote_port = number(line, pos);
      if (port < 1 || port > current->num_ports) {
        net.errors.push_back(current_name + ": port " + std::to_string(port) + " out of range");
      }
      if (!current->links.emplace(port, std::make_pair(remote, remote_port)).second) {
        net.errors.push_back(current_name + ": port " + std::to_string(port) + " used twice");
      }
    } else {
      net.errors.push_back("unexpected line: " + line);
    }
  }
  return net;
}

// Structural validity as ibsim checks it (and a bit more): unique ids,
// ports in range, every link listed from both ends, no remote port shared.
std::vector<std::string> link_errors(const Net& net) {
  std::vector<std::string> errors = net.errors;
  std::set<std::pair<std::string, int>> remote_ends;
  for (const auto& [name, node] : net.nodes) {
    for (const auto& [port, remote] : node.links) {
      const auto it = net.nodes.find(remote.first);
      if (it == net.nodes.end()) {
        errors.push_back(name + "[" + std::to_string(port) + "] -> unknown " + remote.first);
        continue;
      }
      if (remote.second < 1 || remote.second > it->second.num_ports) {
        errors.push_back(name + "[" + std::to_string(port) + "] -> bad remote port");
      }
      const auto back = it->second.links.find(remote.second);
      if (back == it->second.links.end() || back->second != std::make_pair(name, port)) {
        errors.push_back(name + "[" + std::to_string(port) + "] -> " + remote.first + "[" +
                         std::to_string(remote.second) + "] is not symmetric");
      }
      if (!remote_ends.emplace(remote).second) {
        errors.push_back(remote.first + "[" + std::to_string(remote.second) +
                         "] is the remote end of two links");
      }
    }
  }
  return errors;
}

// HCA "<host> mlx5_<r>" of a GPU server must sit on a leaf "leaf-r<r>-NN".
std::vector<std::string> rail_errors(const Net& net, const std::string& exempt = {}) {
  std::vector<std::string> errors;
  for (const auto& [name, node] : net.nodes) {
    if (node.is_switch || !name.starts_with("gpu")) continue;
    const std::string rail = name.substr(name.rfind("mlx5_") + 5);
    const std::string expected_leaf = "leaf-r" + rail + "-";
    for (const auto& [port, remote] : node.links) {
      const bool on_rail_leaf = remote.first.starts_with(expected_leaf);
      if (name == exempt) {
        if (on_rail_leaf) errors.push_back(name + " was supposed to be miscabled");
      } else if (!on_rail_leaf) {
        errors.push_back(name + " is on " + remote.first);
      }
    }
  }
  return errors;
}

std::size_t count_prefix(const Net& net, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& [name, node] : net.nodes) n += name.starts_with(prefix) ? 1 : 0;
  return n;
}

std::size_t link_count(const Net& net) {
  std::size_t ends = 0;
  for (const auto& [name, node] : net.nodes) ends += node.links.size();
  return ends / 2;
}

void require_valid(const SimNet& fabric, const std::string& miscabled = {}) {
  const Net net = parse_net(fabric.to_netfile());
  const auto errors = link_errors(net);
  INFO("first error: " << (errors.empty() ? "" : errors.front()));
  REQUIRE(errors.empty());
  const auto rails = rail_errors(net, miscabled);
  INFO("first rail error: " << (rails.empty() ? "" : rails.front()));
  REQUIRE(rails.empty());
  REQUIRE(!net.order.empty());
  REQUIRE(net.order.front() == "mgmt01 mlx5_0");
  REQUIRE(net.nodes.at("mgmt01 mlx5_0").links.size() == 1);
  REQUIRE(net.nodes.size() == fabric.nodes().size());
  REQUIRE(link_count(net) == fabric.link_count());
}

FatTreeSpec small_spec(int servers, int rails, int tiers, int radix) {
  FatTreeSpec spec;
  spec.servers = servers;
  spec.rails = rails;
  spec.tiers = tiers;
  spec.radix = radix;
  return spec;
}

}  // namespace

TEST_CASE("fabric_gen: small 2-tier fat tree counts and names", "[fabric_gen]") {
  const SimNet fabric = ibfx::test::make_fat_tree(small_spec(4, 2, 2, 8));
  // d = 4 down-ports: one leaf per rail; 2 leaves * 4 uplinks over spines
  // with a spare port for mgmt -> 2 spines, 2 links per leaf/spine pair.
  CHECK(fabric.count(NodeRole::kLeaf) == 2);
  CHECK(fabric.count(NodeRole::kSpine) == 2);
  CHECK(fabric.count(NodeRole::kCore) == 0);
  CHECK(fabric.count(NodeRole::kServerHca) == 8);
  CHECK(fabric.count(NodeRole::kMgmtHca) == 1);
  CHECK(fabric.switch_count() == 4);
  CHECK(fabric.hca_count() == 9);
  CHECK(fabric.link_count() == 8 + 8 + 1);
  CHECK(fabric.port_count() == 4 * 9 + 9);
  CHECK(fabric.find("gpu0003 mlx5_1") >= 0);
  CHECK(fabric.find("leaf-r1-01") >= 0);
  CHECK(fabric.find("spine-02") >= 0);
  CHECK(fabric.node(0).name == "mgmt01 mlx5_0");
  require_valid(fabric);
}

TEST_CASE("fabric_gen: 2-tier leaves reach every spine evenly", "[fabric_gen]") {
  for (const auto& spec : {small_spec(4, 2, 2, 8), small_spec(6, 3, 2, 8), small_spec(16, 4, 2, 16),
                           small_spec(256, 8, 2, 64), small_spec(33, 4, 2, 32)}) {
    const SimNet fabric = ibfx::test::make_fat_tree(spec);
    require_valid(fabric);
    const std::size_t spines = fabric.count(NodeRole::kSpine);
    const int d = spec.radix / 2;
    REQUIRE(d % static_cast<int>(spines) == 0);
    const int width = d / static_cast<int>(spines);
    int missing = 0;  // the management HCA may have taken one uplink of a full fabric
    for (const auto& node : fabric.nodes()) {
      if (node.role != NodeRole::kLeaf) continue;
      std::map<int, int> per_spine;
      for (const auto& peer : node.ports) {
        if (peer.connected() && fabric.node(peer.node).role == NodeRole::kSpine) {
          ++per_spine[peer.node];
        }
      }
      missing += static_cast<int>(spines - per_spine.size()) * width;
      for (const auto& [spine, links] : per_spine) {
        CHECK(links <= width);
        missing += width - links;
      }
    }
    CHECK(missing <= 1);
  }
}

TEST_CASE("fabric_gen: leaves per rail and ports within radix", "[fabric_gen]") {
  const SimNet fabric = ibfx::test::make_fat_tree(small_spec(10, 2, 2, 8));
  // ceil(10 / 4) = 3 leaves per rail.
  CHECK(fabric.count(NodeRole::kLeaf) == 6);
  CHECK(fabric.find("leaf-r1-03") >= 0);
  CHECK(fabric.find("leaf-r2-01") < 0);
  for (const auto& node : fabric.nodes()) {
    if (node.is_switch()) CHECK(node.num_ports() == 8);
    if (!node.is_switch()) CHECK(node.num_ports() == 1);
  }
  require_valid(fabric);
}

TEST_CASE("fabric_gen: 3-tier fat tree wiring", "[fabric_gen]") {
  const FatTreeSpec spec = small_spec(20, 4, 3, 8);
  const SimNet fabric = ibfx::test::make_fat_tree(spec);
  require_valid(fabric);
  const int d = spec.radix / 2;
  // 5 leaves per rail, 20 leaves, 5 pods of 4 leaves, 4 spines per pod;
  // 5 pods on radix-8 cores -> m = 1 spine per plane and pod, 4 planes of 4.
  CHECK(fabric.count(NodeRole::kLeaf) == 20);
  CHECK(fabric.count(NodeRole::kSpine) == 20);
  CHECK(fabric.count(NodeRole::kCore) == 16);
  for (int i = 0; i < static_cast<int>(fabric.nodes().size()); ++i) {
    const auto& node = fabric.node(i);
    std::set<int> peers;
    int ups = 0, downs = 0;
    for (int p = 1; p <= node.num_ports(); ++p) {
      const auto& peer = node.ports[static_cast<std::size_t>(p)];
      if (!peer.connected()) continue;
      const NodeRole role = fabric.node(peer.node).role;
      if (node.role == NodeRole::kLeaf && role == NodeRole::kSpine) {
        ++ups;
        CHECK(p > d);
      }
      if (node.role == NodeRole::kSpine && role == NodeRole::kCore) {
        ++ups;
        CHECK(p > d);
      }
      if (node.role == NodeRole::kSpine && role == NodeRole::kLeaf) {
        ++downs;
        CHECK(p <= d);
      }
      if (node.is_switch() && fabric.node(peer.node).is_switch()) {
        // No parallel switch links in the 3-tier construction.
        CHECK(peers.insert(peer.node).second);
      }
    }
    if (node.role == NodeRole::kLeaf || node.role == NodeRole::kSpine) CHECK(ups == d);
    if (node.role == NodeRole::kSpine) CHECK(downs >= 1);
  }
}

TEST_CASE("fabric_gen: storage nodes get their own leaf", "[fabric_gen]") {
  FatTreeSpec spec = small_spec(4, 2, 2, 16);
  spec.storage_nodes = 3;
  const SimNet fabric = ibfx::test::make_fat_tree(spec);
  require_valid(fabric);
  CHECK(fabric.count(NodeRole::kStorageLeaf) == 1);
  CHECK(fabric.count(NodeRole::kStorageHca) == 3);
  const int stor = fabric.find("stor02 mlx5_0");
  REQUIRE(stor >= 0);
  CHECK(fabric.node(fabric.node(stor).ports[1].node).name == "leaf-stor-01");

  spec.tiers = 3;
  spec.storage_nodes = 20;  // > 8 down-ports: 3 storage leaves
  const SimNet three = ibfx::test::make_fat_tree(spec);
  require_valid(three);
  CHECK(three.count(NodeRole::kStorageLeaf) == 3);
  CHECK(three.find("stor20 mlx5_0") >= 0);
}

TEST_CASE("fabric_gen: management HCA on a full fabric", "[fabric_gen]") {
  // 256 servers x 8 rails on radix 64: 64 full leaves, 32 full spines. The
  // management HCA takes one spine port (one leaf uplink less).
  const SimNet fabric = ibfx::test::make_fat_tree(small_spec(256, 8, 2, 64));
  require_valid(fabric);
  const auto& mgmt = fabric.node(0);
  CHECK(fabric.node(mgmt.ports[1].node).role == NodeRole::kSpine);
  CHECK(fabric.link_count() == 256 * 8 + 64 * 32 - 1 + 1);
}

// The bound catches an accidentally quadratic generator (~0.1 s in a release
// build). Sanitizer builds (Debug, 5-20x slower, on CI's 2 busy cores: 8 s
// seen under TSan) get a bound that still catches that but not their cost.
constexpr auto k16kBudget = std::chrono::seconds(ibfx::test::kSanitized ? 60 : 5);

TEST_CASE("fabric_gen: the 16k preset", "[fabric_gen]") {
  const auto start = std::chrono::steady_clock::now();
  const SimNet fabric = ibfx::test::make_fat_tree(ibfx::test::preset_16k());
  const std::string text = fabric.to_netfile();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed < k16kBudget);
  CHECK(fabric.count(NodeRole::kLeaf) == 512);
  CHECK(fabric.count(NodeRole::kSpine) == 512);
  CHECK(fabric.count(NodeRole::kCore) == 256);
  CHECK(fabric.count(NodeRole::kServerHca) == 16384);
  CHECK(fabric.count(NodeRole::kMgmtHca) == 1);
  CHECK(fabric.nodes().size() == 17665);
  CHECK(fabric.port_count() == 1280 * 65 + 16385);
  // 16384 HCA links + 512 * 32 leaf uplinks + 512 * 32 spine uplinks.
  CHECK(fabric.link_count() == 16384 + 16384 + 16384);
  CHECK(fabric.find("gpu2048 mlx5_7") >= 0);
  CHECK(fabric.find("leaf-r7-64") >= 0);
  CHECK(fabric.find("core-256") >= 0);

  const auto sizes = fabric.sizes();
  CHECK(sizes.nodes >= 17665);
  CHECK(sizes.switches >= 1280);
  CHECK(sizes.ports >= 99585);
  CHECK(sizes.linear_cap == 0);  // 17665 LIDs fit ibsim's default table
  CHECK(ibfx::test::estimate_sizes(text).flags() == sizes.flags());

  const Net net = parse_net(text);
  const auto errors = link_errors(net);
  INFO("first error: " << (errors.empty() ? "" : errors.front()));
  CHECK(errors.empty());
  CHECK(rail_errors(net).empty());
  CHECK(net.order.front() == "mgmt01 mlx5_0");
  CHECK(count_prefix(net, "leaf-r") == 512);
  CHECK(count_prefix(net, "spine-") == 512);
  CHECK(count_prefix(net, "core-") == 256);
  CHECK(count_prefix(net, "gpu") == 16384);
}

TEST_CASE("fabric_gen: ring and single switch", "[fabric_gen]") {
  ibfx::test::RingSpec ring;
  ring.switches = 5;
  ring.servers = 9;
  ring.rails = 1;
  ring.radix = 8;
  const SimNet r = ibfx::test::make_ring(ring);
  const Net net = parse_net(r.to_netfile());
  CHECK(link_errors(net).empty());
  CHECK(net.order.front() == "mgmt01 mlx5_0");
  CHECK(r.switch_count() == 5);
  CHECK(r.count(NodeRole::kServerHca) == 9);
  CHECK(r.link_count() == 5 + 9 + 1);
  for (const auto& node : r.nodes()) {
    if (!node.is_switch()) continue;
    int switch_peers = 0;
    for (const auto& peer : node.ports) {
      switch_peers += peer.connected() && r.node(peer.node).is_switch() ? 1 : 0;
    }
    CHECK(switch_peers == 2);
  }

  ibfx::test::SingleSwitchSpec single;
  single.servers = 3;
  single.rails = 2;
  single.radix = 8;
  const SimNet s = ibfx::test::make_single_switch(single);
  CHECK(link_errors(parse_net(s.to_netfile())).empty());
  CHECK(s.switch_count() == 1);
  CHECK(s.link_count() == 7);
  CHECK(s.node(0).name == "mgmt01 mlx5_0");
}

TEST_CASE("fabric_gen: irregular fabric is deterministic and miscabled once", "[fabric_gen]") {
  ibfx::test::IrregularSpec spec;
  spec.removed_links = 3;
  spec.seed = 42;
  const SimNet a = ibfx::test::make_irregular(spec);
  const SimNet b = ibfx::test::make_irregular(spec);
  CHECK(a.to_netfile() == b.to_netfile());
  spec.seed = 43;
  const SimNet c = ibfx::test::make_irregular(spec);
  CHECK(a.to_netfile() != c.to_netfile());

  for (const SimNet* f : {&a, &c}) {
    REQUIRE(!f->miscabled_hca.empty());
    require_valid(*f, f->miscabled_hca);
    const auto& hca = f->node(f->find(f->miscabled_hca));
    const auto& leaf = f->node(hca.ports[1].node);
    CHECK(leaf.role == NodeRole::kLeaf);
    CHECK(leaf.rail == (hca.rail + 1) % spec.base.rails);
    const SimNet base = ibfx::test::make_fat_tree(spec.base);
    CHECK(f->link_count() + f->removed_links.size() == base.link_count());
    std::size_t switch_links_removed = 0;
    for (const auto& [x, y] : f->removed_links) {
      switch_links_removed +=
          f->node(f->find(x.node)).is_switch() && f->node(f->find(y.node)).is_switch() ? 1 : 0;
    }
    CHECK(switch_links_removed == 3);
  }
}

TEST_CASE("fabric_gen: miscabling a full rail displaces an HCA", "[fabric_gen]") {
  ibfx::test::IrregularSpec spec;
  spec.base = small_spec(8, 2, 2, 8);  // leaves full: no spare down-port
  spec.removed_links = 0;
  spec.seed = 7;
  const SimNet f = ibfx::test::make_irregular(spec);
  require_valid(f, f.miscabled_hca);
  REQUIRE(f.removed_links.size() == 1);
  const int displaced = f.find(f.removed_links.front().first.node);
  REQUIRE(displaced >= 0);
  CHECK(!f.node(displaced).ports[1].connected());
}

TEST_CASE("fabric_gen: sizes and link annotation", "[fabric_gen]") {
  SimNet fabric = ibfx::test::make_fat_tree(small_spec(4, 2, 2, 8));
  const auto sizes = fabric.sizes();
  CHECK(sizes.nodes > static_cast<int>(fabric.nodes().size()));
  CHECK(sizes.switches > static_cast<int>(fabric.switch_count()));
  CHECK(sizes.ports > static_cast<int>(fabric.port_count()));
  CHECK(sizes.flags() == "-N " + std::to_string(sizes.nodes) + " -S " +
                             std::to_string(sizes.switches) + " -P " + std::to_string(sizes.ports));
  CHECK(fabric.to_netfile().find("\"[1]\t# lid 0 4xHDR\n") != std::string::npos);
  fabric.link_type.clear();
  CHECK(fabric.to_netfile().find("# lid") == std::string::npos);
  fabric.link_type = "3xHDR";
  CHECK_THROWS_AS(fabric.to_netfile(), std::invalid_argument);
  CHECK(ibfx::test::valid_link_type("12xEDR"));
  CHECK(!ibfx::test::valid_link_type("4xNDR"));
}

TEST_CASE("fabric_gen: bad specs throw invalid_argument", "[fabric_gen]") {
  using ibfx::test::make_fat_tree;
  CHECK_THROWS_AS(make_fat_tree(small_spec(4, 2, 2, 7)), std::invalid_argument);    // odd radix
  CHECK_THROWS_AS(make_fat_tree(small_spec(0, 2, 2, 8)), std::invalid_argument);    // no servers
  CHECK_THROWS_AS(make_fat_tree(small_spec(4, 0, 2, 8)), std::invalid_argument);    // no rails
  CHECK_THROWS_AS(make_fat_tree(small_spec(4, 2, 4, 8)), std::invalid_argument);    // 4 tiers
  CHECK_THROWS_AS(make_fat_tree(small_spec(4, 2, 2, 2)), std::invalid_argument);    // tiny radix
  CHECK_THROWS_AS(make_fat_tree(small_spec(4, 2, 2, 256)), std::invalid_argument);  // > 255 ports
  // 2 tiers hold at most radix leaves: 2048 x 8 needs 512.
  FatTreeSpec too_wide = ibfx::test::preset_16k();
  too_wide.tiers = 2;
  CHECK_THROWS_AS(make_fat_tree(too_wide), std::invalid_argument);
  // 3 tiers hold at most radix * radix / 2 leaves.
  CHECK_THROWS_AS(make_fat_tree(small_spec(100, 8, 3, 8)), std::invalid_argument);
  FatTreeSpec negative_storage = small_spec(4, 2, 2, 8);
  negative_storage.storage_nodes = -1;
  CHECK_THROWS_AS(make_fat_tree(negative_storage), std::invalid_argument);
  FatTreeSpec bad_name = small_spec(4, 2, 2, 8);
  bad_name.host_prefix = "gp\"u";
  CHECK_THROWS_AS(make_fat_tree(bad_name), std::invalid_argument);
  bad_name.host_prefix = std::string(70, 'x');
  CHECK_THROWS_AS(make_fat_tree(bad_name), std::invalid_argument);

  ibfx::test::RingSpec ring;
  ring.switches = 2;
  CHECK_THROWS_AS(ibfx::test::make_ring(ring), std::invalid_argument);
  ring.switches = 3;
  ring.servers = 30;
  ring.radix = 8;
  CHECK_THROWS_AS(ibfx::test::make_ring(ring), std::invalid_argument);

  ibfx::test::SingleSwitchSpec single;
  single.servers = 8;
  single.radix = 8;  // 8 HCAs + mgmt
  CHECK_THROWS_AS(ibfx::test::make_single_switch(single), std::invalid_argument);

  ibfx::test::IrregularSpec irregular;
  irregular.base.rails = 1;
  CHECK_THROWS_AS(ibfx::test::make_irregular(irregular), std::invalid_argument);
  irregular.base.rails = 2;
  irregular.removed_links = 1000;
  CHECK_THROWS_AS(ibfx::test::make_irregular(irregular), std::invalid_argument);
}
