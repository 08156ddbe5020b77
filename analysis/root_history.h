// The roots of the previous sweeps, for the root-or-victim analysis of the
// next one (hysteresis): a port that was a root keeps the lower "hold"
// thresholds (CongestionConfig::hold_fraction) for as long as its tree lasts,
// so a root whose utilisation dips from 0.95 to 0.85 between two sweeps stays
// the root instead of dissolving into its victims. Owned by SweepAnalyzer;
// docs/scores.md, "Over sweeps", has the rule.
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

  // Parallel to `samples`: 1 for a port held as a root.
  std::vector<std::uint8_t> held(const Fabric& fabric,
                                 const std::vector<PortSample>& samples) const;
  // Records this sweep's roots (every root of the forest, not only the top
  // k) and ages the others; `ports` is parallel to forest.root.
  void update(const Fabric& fabric, const std::vector<PortScore>& ports,
              const CongestionForest& forest);
  void forget(const PortKey& key) { sweeps_left_.erase(key); }
  std::size_t size() const { return sweeps_left_.size(); }

 private:
  std::unordered_map<PortKey, int, PortKeyHash> sweeps_left_;
};

}  // namespace ibfx
