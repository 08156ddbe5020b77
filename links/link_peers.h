// Links slower than their peers: trained at a lower width or speed than the
// median of the links like them (same node type, tier and rail at this end,
// same node type and tier at the far end; the grouping of the shipped
// recording rule). Once per discovery: the rates come from PortInfo.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/topology.h"
#include "fabric/fabric.h"

namespace ibfx {

struct SlowerLink {
  std::int32_t node = kNoNode;
  std::uint32_t port_index = 0;  // index into FabricNode::ports
  double rate_gbps = 0;          // link_rate_gbps() of the port
  double peers_rate_gbps = 0;    // the median of its peers
};

// Every up, cabled port below the median rate of its peers, in fabric order
// (both ends of a slow cable are listed). `topology` may be null (tiers
// unknown, no rails).
std::vector<SlowerLink> links_slower_than_peers(const Fabric& fabric, const Topology* topology);

}  // namespace ibfx
