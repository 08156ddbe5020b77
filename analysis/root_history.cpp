#include "analysis/root_history.h"

#include <algorithm>
#include <iterator>

namespace ibfx {
namespace {

bool key_of(const Fabric& fabric, std::int32_t node, std::uint32_t port_index, PortKey& key) {
  if (node < 0 || static_cast<std::size_t>(node) >= fabric.nodes.size()) return false;
  const FabricNode& n = fabric.nodes[static_cast<std::size_t>(node)];
  if (port_index >= n.ports.size()) return false;
  key = PortKey{n.guid, n.ports[port_index].number};
  return true;
}

}  // namespace

RootMemory RootHistory::recall(const Fabric& fabric, const std::vector<PortSample>& samples) const {
  RootMemory m;
  m.held.assign(samples.size(), 0);
  m.held_cause.assign(samples.size(), CongestionCause::kUnexplained);
  m.tree.assign(samples.size(), kNoPort);
  if (roots_.empty()) return m;
  // Where each held root is in this sweep's samples, for its victims.
  std::unordered_map<PortKey, std::size_t, PortKeyHash> index_of_root;
  std::vector<PortKey> keys(samples.size());
  std::vector<std::uint8_t> known(samples.size(), 0);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    if (!key_of(fabric, samples[k].node, samples[k].port_index, keys[k])) continue;
    known[k] = 1;
    const auto it = roots_.find(keys[k]);
    if (it == roots_.end()) continue;
    m.held[k] = 1;
    m.held_cause[k] = it->second.cause;
    index_of_root.emplace(keys[k], k);
  }
  if (tree_of_.empty()) return m;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    if (!known[k]) continue;
    const auto member = tree_of_.find(keys[k]);
    if (member == tree_of_.end()) continue;
    const auto root = index_of_root.find(member->second);
    if (root != index_of_root.end()) m.tree[k] = root->second;
  }
  return m;
}

void RootHistory::update(const Fabric& fabric, const std::vector<PortScore>& ports,
                         const CongestionForest& forest) {
  for (auto it = roots_.begin(); it != roots_.end();) {
    it = --it->second.sweeps_left < 0 ? roots_.erase(it) : std::next(it);
  }
  tree_of_.clear();
  const std::size_t count = std::min(ports.size(), forest.root.size());
  // The roots that may keep their tree next sweep, by index.
  std::unordered_map<std::size_t, PortKey> keeping;
  auto record = [&](const CongestionRoot& r) {
    PortKey key;
    if (r.port >= count || !key_of(fabric, ports[r.port].node, ports[r.port].port_index, key)) {
      return;
    }
    Held& h = roots_[key];
    h.continued = r.continued ? h.continued + 1 : 0;
    h.sweeps_left = kGraceSweeps;
    h.cause = r.cause;
    if (h.continued < kMaxContinuedSweeps) keeping.emplace(r.port, key);
  };
  for (const CongestionRoot& r : forest.roots) record(r);
  for (const CongestionRoot& r : forest.beyond_top_k) record(r);
  if (keeping.empty()) return;
  for (std::size_t k = 0; k < count; ++k) {
    if (forest.root[k] == kNoPort || forest.root[k] == k) continue;
    const auto root = keeping.find(forest.root[k]);
    PortKey key;
    if (root != keeping.end() && key_of(fabric, ports[k].node, ports[k].port_index, key)) {
      tree_of_.emplace(key, root->second);
    }
  }
}

}  // namespace ibfx
