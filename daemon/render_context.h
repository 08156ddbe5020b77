// What every renderer needs from one snapshot, computed once per render:
// the label strings of each node and port, tier and rail by node, which
// ports' counters are exported, and where each analysed port sits.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibfx {

struct Snapshot;
struct Fabric;

class RenderContext {
 public:
  explicit RenderContext(const Snapshot& snapshot);

  const Snapshot& snapshot() const { return s_; }
  const Fabric& fabric() const { return *fabric_; }

  // node_guid="..." : the identity of a node's per-node series.
  const std::string& node_id(std::size_t n) const { return node_ids_[n]; }
  // node_guid="...",port="N" : the identity of a port's per-port series
  // (index into Snapshot::ports).
  const std::string& port_id(std::size_t i) const { return port_ids_[i]; }
  // Parallel to Snapshot::ports.
  const std::vector<std::string>& port_ids() const { return port_ids_; }
  // node_guid, node_name, node_type: for the few series per node or port
  // that are read without a join (scores, roots, topology findings).
  std::string node_named(std::size_t n) const;
  // node_named + port, tier, rail of one port.
  std::string port_named(std::size_t i) const;

  std::string_view tier_of(std::size_t n) const;
  std::string rail_of(std::size_t n) const;

  // Whether the per-port counters of port view `i` are exported (config `export:`).
  bool port_exported(std::size_t i) const;
  // The port view index of an analysed (node, port index), -1 when absent.
  std::int64_t view_of(std::int32_t node, std::uint32_t port_index) const;

 private:
  const Snapshot& s_;
  const Fabric* fabric_;
  std::vector<std::string> node_ids_;
  std::vector<std::string> port_ids_;
  std::map<std::pair<std::int32_t, std::uint32_t>, std::size_t> view_;
};

}  // namespace ibfx
