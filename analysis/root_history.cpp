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

std::vector<std::uint8_t> RootHistory::held(const Fabric& fabric,
                                            const std::vector<PortSample>& samples) const {
  std::vector<std::uint8_t> out(samples.size(), 0);
  if (sweeps_left_.empty()) return out;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    PortKey key;
    if (key_of(fabric, samples[k].node, samples[k].port_index, key)) {
      out[k] = sweeps_left_.contains(key) ? 1 : 0;
    }
  }
  return out;
}

void RootHistory::update(const Fabric& fabric, const std::vector<PortScore>& ports,
                         const CongestionForest& forest) {
  for (auto it = sweeps_left_.begin(); it != sweeps_left_.end();) {
    it = --it->second < 0 ? sweeps_left_.erase(it) : std::next(it);
  }
  const std::size_t count = std::min(ports.size(), forest.root.size());
  for (std::size_t k = 0; k < count; ++k) {
    if (forest.root[k] != k) continue;
    PortKey key;
    if (key_of(fabric, ports[k].node, ports[k].port_index, key)) sweeps_left_[key] = kGraceSweeps;
  }
}

}  // namespace ibfx
