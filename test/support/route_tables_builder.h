// Forwarding tables for hand-built test fabrics, as a subnet manager's
// min-hop routing makes them: every switch forwards each LID to a
// neighbour one hop nearer, choosing among equals the port that forwards
// the fewest LIDs so far (so a leaf's up ports share the destinations
// evenly, as opensm's minhop does).
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabric/fabric.h"
#include "fabric/route_tables.h"

namespace ibfx::test {

// Port number of switch or HCA `node` (an index into f.nodes) cabled to node
// `remote`.
inline std::uint8_t port_to(const ibfx::Fabric& f, int node, int remote) {
  for (const ibfx::FabricPort& p : f.nodes[static_cast<std::size_t>(node)].ports) {
    if (p.remote_node == remote) return p.number;
  }
  throw std::invalid_argument("port_to: node " + std::to_string(node) + " has no link to node " +
                              std::to_string(remote));
}

inline ibfx::RouteTables min_hop_tables(const ibfx::Fabric& f) {
  ibfx::RouteTables t;
  std::uint16_t top = 0;
  for (const ibfx::FabricNode& n : f.nodes) {
    top = std::max(top, n.lid);
    for (const ibfx::FabricPort& p : n.ports) {
      top = std::max<std::uint16_t>(top, static_cast<std::uint16_t>(p.lid + (1U << p.lmc) - 1));
    }
  }
  std::vector<std::int32_t> table_of(f.nodes.size(), -1);
  std::vector<std::vector<int>> used(f.nodes.size(), std::vector<int>(256, 0));
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    if (f.nodes[n].type != NodeType::kSwitch) continue;
    ibfx::SwitchRoutes s;
    s.guid = f.nodes[n].guid;
    s.lid = f.nodes[n].lid;
    s.linear_fdb_top = top;
    s.out_port.assign(std::size_t{top} + 1, kNoRoute);
    s.complete = true;
    s.read_at = std::chrono::system_clock::now();
    table_of[n] = static_cast<std::int32_t>(t.switches.size());
    t.switches.push_back(std::move(s));
  }
  auto is_switch = [&f](std::int32_t n) {
    return n >= 0 && f.nodes[static_cast<std::size_t>(n)].type == NodeType::kSwitch;
  };
  // The LIDs to route, by the switch they are delivered from (a switch's
  // own LID from itself, port 0): distances depend on that switch only, so
  // they are computed once per switch, whatever the fabric's size.
  std::vector<std::vector<std::pair<std::uint16_t, std::uint8_t>>> by_target(f.nodes.size());
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const ibfx::FabricNode& node = f.nodes[n];
    if (node.type == NodeType::kSwitch) {
      by_target[n].emplace_back(node.lid, 0);
      continue;
    }
    for (const ibfx::FabricPort& p : node.ports) {
      if (p.lid == 0 || !p.linked() || !is_switch(p.remote_node)) continue;
      for (unsigned k = 0; k < (1U << p.lmc); ++k) {
        by_target[static_cast<std::size_t>(p.remote_node)].emplace_back(
            static_cast<std::uint16_t>(p.lid + k), p.remote_port);
      }
    }
  }
  std::vector<int> dist(f.nodes.size());
  std::vector<std::vector<std::uint8_t>> nearer(f.nodes.size());
  for (std::size_t target = 0; target < f.nodes.size(); ++target) {
    if (by_target[target].empty()) continue;
    std::fill(dist.begin(), dist.end(), -1);
    std::deque<std::int32_t> queue{static_cast<std::int32_t>(target)};
    dist[target] = 0;
    while (!queue.empty()) {
      const std::int32_t s = queue.front();
      queue.pop_front();
      for (const ibfx::FabricPort& p : f.nodes[static_cast<std::size_t>(s)].ports) {
        if (!p.linked() || !p.up() || !is_switch(p.remote_node)) continue;
        if (dist[static_cast<std::size_t>(p.remote_node)] >= 0) continue;
        dist[static_cast<std::size_t>(p.remote_node)] = dist[static_cast<std::size_t>(s)] + 1;
        queue.push_back(p.remote_node);
      }
    }
    for (std::size_t n = 0; n < f.nodes.size(); ++n) {
      nearer[n].clear();
      if (table_of[n] < 0 || dist[n] <= 0) continue;
      for (const ibfx::FabricPort& p : f.nodes[n].ports) {
        if (!p.linked() || !p.up() || !is_switch(p.remote_node)) continue;
        if (dist[static_cast<std::size_t>(p.remote_node)] == dist[n] - 1)
          nearer[n].push_back(p.number);
      }
    }
    for (const auto& [lid, last_port] : by_target[target]) {
      for (std::size_t n = 0; n < f.nodes.size(); ++n) {
        if (table_of[n] < 0 || dist[n] < 0) continue;
        auto& out = t.switches[static_cast<std::size_t>(table_of[n])].out_port;
        if (n == target) {
          out[lid] = last_port;
          continue;
        }
        int best = -1;
        for (const std::uint8_t port : nearer[n]) {
          if (best < 0 || used[n][port] < used[n][static_cast<std::size_t>(best)]) best = port;
        }
        if (best < 0) continue;
        out[lid] = static_cast<std::uint8_t>(best);
        ++used[n][static_cast<std::size_t>(best)];
      }
    }
  }
  t.version = 1;
  t.index();
  return t;
}

}  // namespace ibfx::test
