// Congestion scores from two consecutive readings of per-port totals: the
// stall ratio and utilisation of every port, the roots of congestion and
// their victims, a robust hotspot score against its peers, per
// switch scores, tail (p99/p50) scores, the worst up-down path and aggregates
// by rail, switch and tier. Pure computation; see docs/scores.md for the
// formulas and what an operator should read from them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/congestion.h"
#include "analysis/port_score.h"
#include "analysis/topology.h"
#include "analysis/xmit_wait_model.h"
#include "fabric/counters.h"

// yaml-cpp's own spelling of its namespace.
namespace YAML {  // NOLINT(readability-identifier-naming)
class Node;
}

namespace ibfx {

struct ScoreConfig {
  XmitWaitConfig xmit_wait;  // what a PortXmitWait count means, per device
  CongestionConfig congestion;
  // Denominator floor of the hotspot score, in stall-ratio units: below a 1%
  // spread among peers, differences are noise, not hotspots.
  double mad_floor = 0.01;
  double hot_threshold = 3.0;  // a port (or switch) scoring above this is "hot"
  std::size_t top_k = 20;
  double tail_floor = 0.01;  // floor of p50 in the p99/p50 ratio
};

// Parses the `scores:` section. Throws ConfigError
// "<source>:<line>: scores.<key>: <what>". A null node gives the defaults.
ScoreConfig parse_score_config(const YAML::Node& node, const std::string& source);

struct SwitchScore {
  std::int32_t node = kNoNode;
  Tier tier = Tier::kUnknown;
  int rail = kNoRail;
  double mean_stall = 0;  // mean W of its valid ports
  double score = 0;       // robust score of mean_stall among switches of the same tier and rail
  double max_port_score = 0;
  std::size_t hot_ports = 0;  // ports with score > hot_threshold
};

struct TailScore {
  Tier tier = Tier::kUnknown;
  int rail = kNoRail;
  std::size_t ports = 0;
  double p50 = 0;
  double p99 = 0;
  double ratio = 0;  // p99 / max(p50, tail_floor)
};

// A port the worst path leaves through (the egress port whose W counts).
struct PathHop {
  std::int32_t node = kNoNode;
  std::uint32_t port_index = 0;
  double stall = 0;
};

// The up-down path (HCA -> leaf -> [spine -> core -> spine ->] leaf -> HCA)
// whose egress ports have the largest sum of W. rail = kNoRail: over the
// whole fabric; else between HCAs of that rail.
struct WorstPath {
  int rail = kNoRail;
  double stall_sum = 0;  // sum of W over the egress ports
  // sum of W x interval: how long, during the interval, the hops of this
  // path spent with data queued and unable to leave; an upper bound on the
  // added delay a packet on this path could have seen (see docs/scores.md).
  double stalled_seconds = 0;
  std::vector<PathHop> hops;
};

// Means and maxima of W, bytes and errors over a group of ports: a rail, a
// switch or a tier. Unused dimensions are kNoRail / kNoNode / kUnknown.
struct Aggregate {
  Tier tier = Tier::kUnknown;
  int rail = kNoRail;
  std::int32_t node = kNoNode;
  std::size_t ports = 0;  // valid ports
  double mean_stall = 0;
  double max_stall = 0;
  std::uint64_t xmit_bytes = 0;  // PortXmitData x 4 over all ports of the group
  std::uint64_t errors = 0;
};

struct AnalysisResult {
  std::vector<PortScore> ports;        // in input order
  std::vector<SwitchScore> switches;   // by score, descending
  std::vector<std::size_t> top_ports;  // indices into ports, by score descending, at most top_k
  std::vector<TailScore> tails;        // by (tier, rail)
  std::vector<WorstPath> worst_paths;  // whole fabric first, then one per rail
  std::vector<Aggregate> by_rail;      // all tiers, by peer-group rail (rail >= 0 only)
  std::vector<Aggregate> by_switch;    // every switch with samples (leaf grid: tier == leaf)
  std::vector<Aggregate> by_tier;
  CongestionForest congestion;  // roots and victims (docs/scores.md, "Root or victim")
  std::size_t clamped = 0;      // ports whose raw ratio was outside [0, 1]
  std::size_t skipped = 0;      // ports without a usable ratio
  std::size_t hot_ports = 0;    // ports with score > hot_threshold
};

// `samples` refer to nodes and ports of the Fabric that `topology` was
// classified from; samples outside it are skipped.
// `memory` (parallel to `samples`, or empty): what RootHistory remembers of
// the roots of congestion of the previous sweeps.
AnalysisResult analyze(const Topology& topology, const Fabric& fabric,
                       const std::vector<PortSample>& samples, const ScoreConfig& config,
                       const RootMemory& memory = {}, const RouteEvidence* routes = nullptr);

// Helpers, exposed for tests: median, 1.4826-scaled MAD and the linear
// interpolated percentile (q in [0, 1]) of `values` (reordered in place).
double median_of(std::vector<double>& values);
double scaled_mad(std::vector<double>& values, double median);
double percentile_of(std::vector<double>& values, double q);

}  // namespace ibfx
