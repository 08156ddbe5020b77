// Root or victim: the congestion forest of one interval. In a credit-based
// fabric a congested port stalls the ports upstream of it; this tells the
// port where the congestion starts (the root) from the ports that only wait
// for it (its victims). Pure computation; docs/scores.md, "Root or victim",
// has the rules, the fat-tree approximation and its failure modes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "analysis/port_score.h"
#include "analysis/route_evidence.h"
#include "analysis/topology.h"
#include "fabric/fabric.h"

// yaml-cpp's own spelling of its namespace.
namespace YAML {  // NOLINT(readability-identifier-naming)
class Node;
}

namespace ibfx {

struct CongestionConfig {
  double stall_threshold = 0.1;       // W at or above: the port is stalled
  double saturation_threshold = 0.9;  // U at or above: the port is saturated (full)
  // A saturated up port of a switch whose up ports' max/mean transmitted
  // bytes reach this is blamed on routing, not on offered load.
  double imbalance_threshold = 1.5;
  std::size_t top_k = 20;  // roots exported
  // Evidence below the thresholds (docs/scores.md, "Over sweeps"): where
  // stalled ports converge on a hop none of whose ports is congested, the
  // port with the largest max(U / saturation_threshold, W / stall_threshold)
  // is their parent when that reaches evidence_floor and is at least
  // evidence_margin times the hop's second largest.
  double evidence_floor = 0.6;
  double evidence_margin = 1.25;
  // A port held as a root (RootHistory) is congested down to these fractions
  // of the thresholds: it stays the root until its tree decays.
  double hold_fraction = 0.75;
};

enum class CongestionCause : std::uint8_t {
  kIncast,            // saturated port into an HCA: many senders, one receiver
  kOversubscribed,    // saturated switch-to-switch port, its switch's uplinks evenly loaded
  kRoutingImbalance,  // saturated up port, its switch's up ports unevenly used, and the
                      // forwarding tables put more destinations on it than on its peers
  kSlowReceiver,      // stalled into an HCA that is not full: it does not return credits
  kDegradedLink,      // stalled, nothing downstream congested, the link has errors or runs
                      // below its node's widest/fastest link
  kUnexplained,       // stalled, nothing downstream congested, no evidence why
  kFlowCollision,     // as kRoutingImbalance, but the tables spread the destinations evenly:
                      // a few heavy flows happen to share this up port
  kUnevenUplinks,     // as kRoutingImbalance, but the switch's routes are not known (not read
                      // yet, or routes.enabled off): routing or traffic cannot be told apart
};
// "incast", "oversubscribed", "routing_imbalance", "slow_receiver",
// "degraded_link", "unexplained", "flow_collision", "uneven_uplinks".
std::string_view cause_name(CongestionCause cause);

inline constexpr std::size_t kNoPort = std::numeric_limits<std::size_t>::max();

struct CongestionRoot {
  std::size_t port = kNoPort;  // index into the analysed ports
  CongestionCause cause = CongestionCause::kUnexplained;
  // max(W, U) of the root plus the W of every victim attributed to it: how
  // many ports' worth of stall this one explains.
  double score = 0;
  std::size_t victims = 0;  // stalled ports whose chain of waits ends here
  // How it qualified: held from the previous sweeps (hysteresis), parent of
  // its victims on the evidence below the thresholds, or continued: nothing
  // of it reached even the evidence this interval, and its victims are the
  // ports of its tree in the previous sweep (the last, partial interval of a
  // tree; RootMemory::tree). A continued root keeps the cause it was held
  // with.
  bool held = false;
  bool by_evidence = false;
  bool continued = false;
  // Route evidence (a switch port whose table is known; else -1):
  // destinations its switch routes out of the root port, and for an up
  // port the mean of its peers' (the switch's other up ports).
  std::int64_t routes = -1;
  double peer_routes = -1;
};

// What the previous sweeps say of each analysed port (RootHistory::recall),
// parallel to the analysed ports; empty vectors: no memory (the first sweep,
// or a caller without history).
struct RootMemory {
  // 1: a root of the previous sweeps, congested down to hold_fraction of
  // the thresholds (hysteresis), and the cause it had then.
  std::vector<std::uint8_t> held;
  std::vector<CongestionCause> held_cause;
  // The port (index into the analysed ports) whose tree this port was a
  // victim of in the previous sweep, while that tree may still keep it:
  // kNoPort when none. A stalled port that neither the thresholds nor the
  // evidence explain stays in that tree instead of becoming a root of its
  // own (docs/scores.md, "Over sweeps": the end of a tree).
  std::vector<std::size_t> tree;
};

// Per switch with two or more up ports that moved data (mean U at least
// 1 %): max over mean of their transmitted bytes.
struct UplinkImbalance {
  std::int32_t node = kNoNode;
  std::size_t up_ports = 0;
  double ratio = 0;
};

struct CongestionForest {
  // Parallel to the analysed ports. parent: the congested port downstream
  // this one's wait is attributed to (kNoPort: none); root: the end of that
  // chain for a victim, the port itself for a root, else kNoPort.
  std::vector<std::size_t> parent;
  std::vector<std::size_t> root;
  std::vector<CongestionRoot> roots;  // by score, descending; at most top_k
  // The roots ranked after the top k, by score: not exported, but the
  // analysis remembers them (RootHistory) like the others.
  std::vector<CongestionRoot> beyond_top_k;
  std::vector<UplinkImbalance> imbalance;  // by node
  std::size_t stalled = 0;
  std::size_t saturated = 0;
  std::size_t victims = 0;  // stalled ports attributed to a root
  // Victims whose parent was chosen among the ports towards their own rail
  // when a port towards another rail was more congested.
  std::size_t rail_kept = 0;
  // Victims kept in the tree they were in the previous sweep (RootMemory::tree).
  std::size_t kept_in_tree = 0;
};

// `ports` and `samples` are parallel (AnalysisResult::ports and its input),
// with W and U filled in; `topology` classifies `fabric`. `memory`, parallel
// to them too when not empty, is what RootHistory remembers of them.
CongestionForest build_congestion_forest(const Topology& topology, const Fabric& fabric,
                                         const std::vector<PortScore>& ports,
                                         const std::vector<PortSample>& samples,
                                         const CongestionConfig& config,
                                         const RootMemory& memory = {},
                                         const RouteEvidence* routes = nullptr);

}  // namespace ibfx
