// Degraded links (docs/links.md): trained at a lower width or speed than
// the highest both of their ends enable (PortInfo LinkWidthEnabled,
// LinkSpeedEnabled, LinkSpeedExtEnabled), or than the median of the links
// like them (same node type, tier and rail at this end, same node type and
// tier at the far end; the grouping of the shipped recording rule). Once
// per discovery: the rates come from PortInfo.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/topology.h"
#include "fabric/fabric.h"

namespace ibfx {

struct SlowerLink {
  std::int32_t node = kNoNode;
  std::uint32_t port_index = 0;  // index into FabricNode::ports
  double rate_gbps = 0;          // link_rate_gbps() of the port
  double peers_rate_gbps = 0;    // the median of its peers
  bool below_peers = false;      // rate_gbps < peers_rate_gbps
  // Below the highest width or speed both ends enable: `enabled` has it
  // (link_enabled_best()), `enabled_rate_gbps` its rate.
  bool below_enabled = false;
  FabricPort enabled;
  double enabled_rate_gbps = 0;
};

// Every up, cabled port below what both ends enable or below the median
// rate of its peers, in fabric order (both ends of a slow cable are
// listed). `topology` may be null (tiers unknown, no rails).
std::vector<SlowerLink> links_slower_than_they_should(const Fabric& fabric,
                                                      const Topology* topology);

// Why a link is degraded, in words for a person: "1x HDR, below the 4x HDR
// both ends enable" and/or "50 Gb/s, below its peers' 200 Gb/s". `width`
// and `speed` are the port's (link_width_name(), link_speed_name()).
std::string degraded_reason(bool below_enabled, const std::string& enabled_width,
                            const std::string& enabled_speed, bool below_peers, double rate_gbps,
                            double peers_rate_gbps, const std::string& width,
                            const std::string& speed);

}  // namespace ibfx
