// Hand-built Fabrics for the analysis tests and benchmarks: a link-by-link
// builder and a rail-optimized fat tree. Header-only test support, kept out of
// the production libraries; it models exactly what analysis/ expects.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabric/fabric.h"

namespace ibfx::test {

class FabricBuilder {
 public:
  int add_switch(std::string description) { return add(NodeType::kSwitch, std::move(description)); }
  int add_hca(std::string description) { return add(NodeType::kHca, std::move(description)); }

  // Cables the next free port of `a` to the next free port of `b`; both
  // Active, LinkUp, 4x HDR.
  void link(int a, int b) {
    ibfx::FabricNode& na = fabric_.nodes[static_cast<std::size_t>(a)];
    ibfx::FabricNode& nb = fabric_.nodes[static_cast<std::size_t>(b)];
    const auto pa = static_cast<std::uint8_t>(na.ports.size() + 1);
    const auto pb = static_cast<std::uint8_t>(nb.ports.size() + 1);
    na.ports.push_back(port(pa, na.lid, b, pb));
    nb.ports.push_back(port(pb, nb.lid, a, pa));
    na.num_ports = pa;
    nb.num_ports = pb;
  }

  ibfx::Fabric build() {
    fabric_.index();
    return fabric_;
  }

 private:
  int add(NodeType type, std::string description) {
    ibfx::FabricNode n;
    n.type = type;
    n.description = std::move(description);
    n.guid = 0x1000 + fabric_.nodes.size();
    n.lid = static_cast<std::uint16_t>(fabric_.nodes.size() + 1);
    fabric_.nodes.push_back(std::move(n));
    return static_cast<int>(fabric_.nodes.size() - 1);
  }

  static ibfx::FabricPort port(std::uint8_t number, std::uint16_t lid, int remote,
                               std::uint8_t remote_port) {
    ibfx::FabricPort p;
    p.number = number;
    p.lid = lid;
    p.state = 4;
    p.phys_state = 5;
    p.width_active = 2;
    p.speed_ext_active = 4;
    p.remote_node = remote;
    p.remote_port = remote_port;
    return p;
  }

  ibfx::Fabric fabric_;
};

struct RailFabricShape {
  int rails = 2;
  int leaves_per_rail = 2;
  int hosts_per_leaf = 4;
  int spines_per_rail = 2;
  int cores = 0;            // > 0: a third tier, every core cabled to every spine
  bool swap_host0 = false;  // cable host0's mlx5_0 and mlx5_1 to each other's rail
};

// Node indices by role: hca[host][rail], leaf[rail][i], spine[rail][i], core[i].
struct RailFabric {
  ibfx::Fabric fabric;
  std::vector<std::vector<int>> hca;
  std::vector<std::vector<int>> leaf;
  std::vector<std::vector<int>> spine;
  std::vector<int> core;
};

// Host h (on leaf h / hosts_per_leaf of every rail) has one HCA per rail,
// "host<h> mlx5_<rail>"; every leaf of a rail is cabled to every spine of
// that rail; cores, if any, to every spine of every rail.
inline RailFabric rail_fabric(const RailFabricShape& s) {
  FabricBuilder b;
  RailFabric rf;
  const int hosts = s.leaves_per_rail * s.hosts_per_leaf;
  rf.hca.resize(static_cast<std::size_t>(hosts));
  rf.leaf.resize(static_cast<std::size_t>(s.rails));
  rf.spine.resize(static_cast<std::size_t>(s.rails));
  for (int r = 0; r < s.rails; ++r) {
    for (int l = 0; l < s.leaves_per_rail; ++l) {
      rf.leaf[static_cast<std::size_t>(r)].push_back(
          b.add_switch("leaf-r" + std::to_string(r) + "-" + std::to_string(l)));
    }
    for (int sp = 0; sp < s.spines_per_rail; ++sp) {
      rf.spine[static_cast<std::size_t>(r)].push_back(
          b.add_switch("spine-r" + std::to_string(r) + "-" + std::to_string(sp)));
    }
  }
  for (int c = 0; c < s.cores; ++c) rf.core.push_back(b.add_switch("core-" + std::to_string(c)));
  for (int h = 0; h < hosts; ++h) {
    for (int r = 0; r < s.rails; ++r) {
      rf.hca[static_cast<std::size_t>(h)].push_back(
          b.add_hca("host" + std::to_string(h) + " mlx5_" + std::to_string(r)));
    }
  }
  for (int h = 0; h < hosts; ++h) {
    for (int r = 0; r < s.rails; ++r) {
      int leaf_rail = r;
      if (h == 0 && s.swap_host0 && s.rails >= 2 && r < 2) leaf_rail = 1 - r;
      const int leaf = rf.leaf[static_cast<std::size_t>(leaf_rail)]
                              [static_cast<std::size_t>(h / s.hosts_per_leaf)];
      b.link(rf.hca[static_cast<std::size_t>(h)][static_cast<std::size_t>(r)], leaf);
    }
  }
  for (int r = 0; r < s.rails; ++r) {
    for (int leaf : rf.leaf[static_cast<std::size_t>(r)]) {
      for (int spine : rf.spine[static_cast<std::size_t>(r)]) b.link(leaf, spine);
    }
  }
  for (int c : rf.core) {
    for (const auto& spines : rf.spine) {
      for (int spine : spines) b.link(spine, c);
    }
  }
  rf.fabric = b.build();
  return rf;
}

}  // namespace ibfx::test
