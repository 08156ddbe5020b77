// Cables longer than their peers (issue #41, docs/links.md): a link whose
// PortInfo:LinkRoundTripLatency (IBA 14.2.5.6, in ns) stands out against the
// parallel cables between the same two nodes or, with too few of those, the
// cables of the same tiers (leaf-spine, hca-leaf). A longer cable works: the
// condition it gives, `length_outlier`, is shown and never alarmed on. Once
// per discovery: the round trips come from PortInfo.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/topology.h"
#include "fabric/fabric.h"

namespace ibfx {

// The rule's numbers. Signals travel about 5 ns per metre of cable, so a
// round trip grows 10 ns per metre; the PHY's own latency (FEC, an optical
// transceiver) is in the round trip too, the same on like cables.
// Peers with a round trip known, besides the link: fewer give no verdict.
inline constexpr std::size_t kLengthMinPeers = 4;
// Outlier: above the median by more than kLengthMads scaled MADs (1.4826 x
// MAD, a standard deviation for normal data) and by at least
// kLengthFloorNs (5 m more cable), so that like cables' spread of a few ns
// never makes one.
inline constexpr double kLengthMads = 3;
inline constexpr double kLengthFloorNs = 50;

struct LongerLink {
  std::int32_t node = kNoNode;            // the end with the smaller (GUID, port)
  std::uint32_t port_index = 0;           // index into FabricNode::ports
  std::uint32_t round_trip_ns = 0;        // the cable's (see below)
  std::uint32_t peers_round_trip_ns = 0;  // the median of the cables it was judged against
  std::uint32_t peers = 0;                // how many (the link included)
  bool parallel = false;                  // judged against the cables between the same two nodes
};

// A cable's round trip: the mean of what its two ends report, or the one
// that reports (0: neither, not known; ibsim reports 0). Each up cable is
// counted once, whatever its ends say, and judged against the first group
// with at least kLengthMinPeers other cables whose round trip is known:
//   1. the cables between the same two nodes (parallel cables);
//   2. the cables between the same node types and tiers at either end.
// Outliers, in fabric order, once per cable. `topology` may be null (tiers
// unknown: node types only).
std::vector<LongerLink> links_longer_than_their_peers(const Fabric& fabric,
                                                      const Topology* topology);

}  // namespace ibfx
