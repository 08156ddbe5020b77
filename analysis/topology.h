// Topology classification: which tier each node is in (hca, leaf, spine,
// core), which rail each HCA and leaf serves, which way each port points, and
// which HCAs are cabled to a leaf of another rail. Pure computation over a
// discovered Fabric; run once per discovery, not per sweep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fabric/fabric.h"

// yaml-cpp's own spelling of its namespace.
namespace YAML {  // NOLINT(readability-identifier-naming)
class Node;
}

namespace ibfx {

enum class Tier : std::uint8_t { kHca, kLeaf, kSpine, kCore, kUnknown };
inline constexpr std::size_t kTierCount = 5;
std::string_view tier_name(Tier t);  // "hca", "leaf", "spine", "core", "unknown"
std::optional<Tier> parse_tier(std::string_view name);

enum class PortDirection : std::uint8_t {
  kUp,    // towards a higher tier (leaf -> spine, spine -> core)
  kDown,  // towards a lower tier or an HCA
  kHost,  // an HCA's own port
  kPeer,  // same tier, or either end unknown / not a fat-tree link
  kNone,  // switch port with no link
};
std::string_view direction_name(PortDirection d);  // "up", "down", "host", "peer", "none"

inline constexpr int kNoRail = -1;

struct TopologyConfig {
  // Rail number of an HCA from its name: the first capture group, decimal.
  // The default matches the rdma-ndd node description "<host> mlx5_<n>".
  std::string rail_regex = "mlx5_([0-9]+)$";
  // Explicit rails; they win over rail_regex and over a leaf's majority.
  // GUID entries win over name rules; among name rules the first match wins.
  std::unordered_map<std::uint64_t, int> rail_by_guid;
  std::vector<std::pair<std::string, int>> rail_by_name;  // (regex, rail), searched
  // Explicit tiers for switches (HCAs are always `hca`). A switch forced to
  // `leaf` seeds the ranking; one forced to anything else never does.
  std::unordered_map<std::uint64_t, Tier> tier_by_guid;
  std::vector<std::pair<std::string, Tier>> tier_by_name;  // (regex, tier), searched
};

// Parses the `topology:` section (the node is the section's value). Throws
// ConfigError "<source>:<line>: topology.<key>: <what>" on unknown keys, wrong
// types, bad regexes, bad tiers and bad rails. A null node gives the defaults.
TopologyConfig parse_topology_config(const YAML::Node& node, const std::string& source);

// An HCA port cabled to a leaf whose rail is another one.
struct MiscabledHca {
  std::int32_t hca_node = kNoNode;
  std::uint8_t hca_port = 0;  // port number
  std::int32_t switch_node = kNoNode;
  std::uint8_t switch_port = 0;  // port number
  int expected_rail = kNoRail;   // the leaf's rail
  int actual_rail = kNoRail;     // the HCA's rail
};

// Per-node vectors are indexed like Fabric::nodes; direction[n][i] like
// Fabric::nodes[n].ports[i] (an index into the vector, not a port number).
struct Topology {
  std::vector<Tier> tier;
  // HCA: from its name or config; leaf: majority of its HCAs or config;
  // spine/core/unknown: kNoRail.
  std::vector<int> rail;
  // The one rail every leaf below a switch serves, or kNoRail when they serve
  // several (or one has no rail). Leaves and HCAs: their own rail.
  std::vector<int> single_rail;
  std::vector<std::vector<PortDirection>> direction;
  std::vector<MiscabledHca> miscabled;

  std::size_t count(Tier t) const;
};

// `node_names[i]` names node i (node-name-map applied); when missing or empty
// the NodeDescription is used. Throws ConfigError for a regex in `config`
// that does not compile (parse_topology_config already rejects those).
Topology classify_topology(const Fabric& fabric, const std::vector<std::string>& node_names,
                           const TopologyConfig& config);

}  // namespace ibfx
