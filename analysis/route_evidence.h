// What the switches' forwarding tables say of each switch port, as the
// route model (routing/) hands it to the analysis: how many destinations
// each port forwards to. With it a saturated up port's cause is proven
// (docs/scores.md, "Routing or traffic"): the routing put more destinations
// on it than on its peers, or the routes are balanced and a few heavy flows
// collided. Plain numbers, so that the analysis needs no route model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibfx {

struct RouteEvidence {
  // [node][port index] (as Fabric::nodes[node].ports): destination LIDs
  // routed out of the port. Empty for a node whose table is not known
  // (HCAs, a switch not read yet).
  std::vector<std::vector<std::uint32_t>> destinations;

  // The counts of `node`'s ports, null when its table is not known.
  const std::vector<std::uint32_t>* of(std::size_t node) const {
    return node < destinations.size() && !destinations[node].empty() ? &destinations[node]
                                                                     : nullptr;
  }
};

}  // namespace ibfx
