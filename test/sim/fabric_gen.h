// Generator of ibsim net files: rail-optimized fat trees (the clusters the
// exporter is built for) and a few irregular fabrics that exercise the
// analysis code's corner cases (rings, a lone switch, missing links, a
// miscabled HCA).
//
// A net file is ibnetdiscover-like text that `ibsim -s FILE` simulates:
//
//   Hca 1 "mgmt01 mlx5_0"
//   [1] "spine-01"[9]
//
//   Switch 64 "leaf-r0-01"
//   [1] "gpu0001 mlx5_0"[1]
//   ...
//
// ibsim uses the node id as NodeDescription, so HCAs are named the way
// rdma-ndd names real ones ("<host> mlx5_<n>") and the exporter sees the same
// descriptions it would see on a real cluster.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ibfx::test {

enum class NodeRole {
  kServerHca,    // "gpu0001 mlx5_3": rail 3 of a GPU server
  kStorageHca,   // "stor01 mlx5_0": storage target (incast scenarios)
  kMgmtHca,      // "mgmt01 mlx5_0": where opensm and every client attach
  kLeaf,         // rail leaf: all its down-ports serve one rail
  kStorageLeaf,  // leaf of the storage nodes
  kSpine,
  kCore,
  kSwitch,  // switch of a non-fat-tree fabric (ring, single switch)
};

const char* to_string(NodeRole role);
bool is_switch_role(NodeRole role);

// One end of a link: node index into Fabric::nodes() and port number.
struct PortRef {
  int node = -1;  // -1: the port is not cabled
  int port = 0;

  bool connected() const { return node >= 0; }
  friend bool operator==(const PortRef&, const PortRef&) = default;
};

struct FabricNode {
  std::string name;  // ibsim node id, also its NodeDescription
  NodeRole role = NodeRole::kSwitch;
  int rail = -1;               // server HCA: mlx5_<rail>; rail leaf: rail served; else -1
  std::vector<PortRef> ports;  // indexed by port number; [0] is never cabled

  bool is_switch() const { return is_switch_role(role); }
  int num_ports() const { return static_cast<int>(ports.size()) - 1; }
};

// Table sizes ibsim must be started with (-N, -S, -P; -L when the default
// linear forwarding table is too small for the LIDs opensm will assign).
// Its defaults (2048 nodes, 256 switches, 13312 ports) are far too small for
// the big presets, and ibsim aborts while parsing when a table overflows.
struct SimSizes {
  int nodes = 0;
  int switches = 0;
  int ports = 0;       // ibsim counts switch port 0 too
  int linear_cap = 0;  // 0: ibsim's default is enough

  std::vector<std::string> args() const;  // {"-N", "123", "-S", "45", "-P", "6789"}
  std::string flags() const;              // "-N 123 -S 45 -P 6789"
};

// Estimates the sizes of a net file from its text (headers only; `include`
// directives are not followed). Adds the same headroom as Fabric::sizes().
SimSizes estimate_sizes(const std::string& netfile_text);

// Rail-optimized fat tree. Every server has `rails` single-port HCAs
// ("<host> mlx5_<rail>"); HCA r of every server is cabled to a leaf of rail r.
// See make_fat_tree() in fabric_gen.cpp for the exact wiring.
struct FatTreeSpec {
  int servers = 4;
  int rails = 8;
  int tiers = 2;                        // 2: leaf/spine, 3: leaf/spine/core
  int radix = 64;                       // ports per switch, even, <= 255 (ibsim limit)
  int storage_nodes = 0;                // "stor01 mlx5_0"... on dedicated storage leaves
  std::string host_prefix = "gpu";      // gpu0001
  std::string storage_prefix = "stor";  // stor01
  std::string mgmt_host = "mgmt01";     // HCA "mgmt01 mlx5_0", first in the file
  std::string leaf_prefix = "leaf";     // leaf-r3-02, leaf-stor-01
  std::string spine_prefix = "spine";   // spine-05
  std::string core_prefix = "core";     // core-01
};

// The small fat tree the simulated-fabric tests share: 4 servers with 2
// rails, leaf/spine of radix 8 (4 leaves, 2 spines, 9 HCAs with mgmt01).
inline FatTreeSpec small_fat_tree() { return {.servers = 4, .rails = 2, .tiers = 2, .radix = 8}; }

// N switches cabled in a ring (switch i port 1 <-> switch i+1 port 2), the
// servers spread over them in contiguous blocks. Not a tree: every switch
// has two switch neighbours and there is no leaf/spine hierarchy.
struct RingSpec {
  int switches = 4;
  int servers = 8;
  int rails = 1;
  int radix = 36;
  std::string host_prefix = "gpu";
  std::string switch_prefix = "ring";  // ring-01
  std::string mgmt_host = "mgmt01";
};

// One switch, every HCA on it.
struct SingleSwitchSpec {
  int servers = 4;
  int rails = 1;
  int radix = 36;
  std::string host_prefix = "gpu";
  std::string switch_name = "switch-01";
  std::string mgmt_host = "mgmt01";
};

// A fat tree with `removed_links` random switch-to-switch links missing
// (never disconnecting the fabric) and, if `miscable`, one server HCA of rail
// r cabled to a leaf of rail (r + 1) % rails. Deterministic for a seed.
struct IrregularSpec {
  FatTreeSpec base{.servers = 6, .rails = 4, .tiers = 2, .radix = 8};
  int removed_links = 2;
  bool miscable = true;
  std::uint64_t seed = 1;
};

struct PortName {
  std::string node;
  int port = 0;
  friend bool operator==(const PortName&, const PortName&) = default;
  friend auto operator<=>(const PortName&, const PortName&) = default;
};

class Fabric {
 public:
  // Appends a node with ports 1..num_ports uncabled; returns its index.
  // Throws std::invalid_argument for a duplicate or invalid name.
  int add_node(std::string name, NodeRole role, int num_ports, int rail = -1);
  // Cables a[port_a] to b[port_b]. Throws std::logic_error if either port is
  // out of range or already cabled (generator bugs must not produce a file
  // ibsim rejects).
  void connect(int a, int port_a, int b, int port_b);
  // Removes the cable at node[port] (both ends); no-op if uncabled.
  void disconnect(int node, int port);

  int find(const std::string& name) const;  // -1 if absent
  const FabricNode& node(int index) const { return nodes_.at(static_cast<std::size_t>(index)); }
  const std::vector<FabricNode>& nodes() const { return nodes_; }
  // First uncabled port of `node` in [from, to]; -1 if none.
  int free_port(int node, int from, int to) const;

  std::size_t count(NodeRole role) const;
  std::size_t switch_count() const;
  std::size_t hca_count() const;
  std::size_t link_count() const;
  std::size_t port_count() const;  // as ibsim counts them (switch port 0 included)

  SimSizes sizes() const;  // exact counts plus headroom
  std::string to_netfile() const;
  void write_netfile(const std::string& path) const;  // throws std::runtime_error

  // Free-form one-line summary written as a comment at the top of the file.
  std::string description;
  // Width and speed annotated on every port line ("4xHDR", the fastest ibsim
  // 0.10 knows), in ibnetdiscover's "# lid 0 4xHDR" form. ibsim derives the
  // PortInfo link width/speed from it (the default is a 10 Gb/s 4xSDR that no
  // modern cluster has) and warns once per line without it. Empty: omitted.
  std::string link_type = "4xHDR";
  // make_irregular(): the miscabled HCA and the links it removed (including
  // the cable of an HCA displaced by the miscabled one, if any).
  std::string miscabled_hca;
  std::vector<std::pair<PortName, PortName>> removed_links;

 private:
  std::vector<FabricNode> nodes_;
  std::unordered_map<std::string, int> index_;
};

// All generators throw std::invalid_argument for an impossible spec.
Fabric make_fat_tree(const FatTreeSpec& spec);
Fabric make_ring(const RingSpec& spec);
Fabric make_single_switch(const SingleSwitchSpec& spec);
Fabric make_irregular(const IrregularSpec& spec);

// The "16k" cluster: 2048 servers x 8 rails, 3 tiers, radix 64
// (512 leaves, 512 spines, 256 cores, ~100k ports).
FatTreeSpec preset_16k();

// True for the width/speed forms ibsim parses: (1|2|4|8|12)x(SDR|DDR|QDR|FDR|EDR|HDR|FDR10).
bool valid_link_type(const std::string& link_type);

// "gpu0001 mlx5_3": rdma-ndd's default node description.
std::string hca_name(const std::string& host, int rail);

}  // namespace ibfx::test
