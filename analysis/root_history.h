// The roots of the previous sweeps, for the root-or-victim analysis of the
// next one. Two memories (docs/scores.md, "Over sweeps"):
//  - hysteresis: a port that was a root keeps the lower "hold" thresholds
//    (CongestionConfig::hold_fraction) for as long as its tree lasts, so a
//    root whose utilisation dips from 0.95 to 0.85 between two sweeps stays
//    the root instead of dissolving into its victims;
//  - the tree: the victims of each root in the last sweep. A tree's last
//    interval is a partial one (its flows end at an arbitrary instant inside
//    it, and each switch is read at its own instant), so a victim may still
//    read as stalled while its root already reads idle: it stays in its tree
//    (RootMemory::tree) instead of becoming a root of its own, for at most
//    kMaxContinuedSweeps sweeps in which nothing else keeps the root.
// Owned by SweepAnalyzer.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/congestion.h"
#include "analysis/port_score.h"
#include "fabric/fabric.h"
#include "fabric/port_key.h"

namespace ibfx {

class RootHistory {
 public:
  // Sweeps a root stays held after the last sweep it was a root in: 1 bridges
  // one sweep in which the whole tree dipped below even the hold thresholds.
  static constexpr int kGraceSweeps = 1;
  // Consecutive sweeps a root may be kept by its previous tree alone
  // (CongestionRoot::continued): the partial interval of its switches, and
  // one more for victims read before the flow ended on a switch read after
  // it. A stall that lasts beyond is not the old tree's.
  static constexpr int kMaxContinuedSweeps = 2;

  // Parallel to `samples`: what the previous sweeps say of each port.
  RootMemory recall(const Fabric& fabric, const std::vector<PortSample>& samples) const;
  // Records this sweep's roots (every root of the forest, not only the top
  // k) and their trees, and ages the others; `ports` is parallel to
  // forest.root.
  void update(const Fabric& fabric, const std::vector<PortScore>& ports,
              const CongestionForest& forest);
  void forget(const PortKey& key) {
    roots_.erase(key);
    tree_of_.erase(key);
  }
  std::size_t size() const { return roots_.size(); }

 private:
  struct Held {
    int sweeps_left = 0;
    CongestionCause cause = CongestionCause::kUnexplained;
    int continued = 0;  // consecutive sweeps it was a root only by its tree
  };
  std::unordered_map<PortKey, Held, PortKeyHash> roots_;
  // Last sweep's victims -> their root, for the roots that may keep them.
  std::unordered_map<PortKey, PortKey, PortKeyHash> tree_of_;
};

}  // namespace ibfx
