// The known fabric: every discovery is merged into it, none replaces it.
//
// libibnetdisc walks the fabric by directed route; an SMP that is lost after
// its retries costs the whole subtree behind it. Under MAD loss (busy switch
// management CPUs, flapping links, SM sweeps) a discovery therefore often
// misses nodes that are perfectly alive. Replacing the fabric with such a
// discovery would stop the sweep from asking those nodes and make their
// series vanish from /metrics. So a node a discovery did not see is kept as
// it was last seen (LID, ports, cabling) and is still swept; it is forgotten
// only after it was missing from `ForgetPolicy::discoveries` consecutive
// discoveries and unseen for at least `ForgetPolicy::after` (since the last
// discovery that found it), and never while it keeps answering PMA queries
// at its last LID.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/fabric.h"

namespace ibfx {

struct ForgetPolicy {
  int discoveries = 3;                                     // consecutive discoveries that missed it
  std::chrono::milliseconds after{std::chrono::hours(1)};  // and for at least this long
};

struct ForgottenNode {
  std::uint64_t guid = 0;
  std::string description;
  NodeType type = NodeType::kUnknown;
  std::vector<std::uint8_t> ports;  // its port numbers, for whoever holds state per port
};

struct MergeOutcome {
  std::shared_ptr<const Fabric> fabric;  // the known fabric after this discovery
  std::size_t seen = 0;                  // nodes the discovery found
  std::size_t missing = 0;               // known nodes it did not find (kept)
  std::size_t ports_kept = 0;            // ports of seen nodes it did not report (kept)
  std::vector<ForgottenNode> forgotten;  // dropped by this merge
};

class FabricMerger {
 public:
  using Clock = std::chrono::steady_clock;

  explicit FabricMerger(ForgetPolicy policy = {});

  void set_policy(const ForgetPolicy& policy);
  ForgetPolicy policy() const;

  // Merges one discovery into the known fabric and returns it. Seen nodes
  // take what the discovery says (LID, ports, links); a port of a seen node
  // that the discovery did not report (its PortInfo SMP was lost) is kept as
  // it was; a port still physically up whose neighbour was not reached keeps
  // its old link. The merged fabric's discovered_at, discovery_seconds and
  // SMP counts are the discovery's.
  MergeOutcome merge(const Fabric& discovered, Clock::time_point now = Clock::now());

  // A kept node answered PMA queries at its last LID, and the sweep's
  // NodeInfo check confirmed the LID is still its own: evidently still
  // there, so its time towards being forgotten starts again.
  void note_answered(std::uint64_t guid);

  // The nodes forgotten since the last call: whoever keeps state per node
  // or port (totals, capabilities) drops it, so that a node coming back
  // later starts again as a new series rather than resuming old totals.
  std::vector<ForgottenNode> take_forgotten();

  std::shared_ptr<const Fabric> current() const;
  std::size_t missing() const;  // known nodes the last discovery did not find

 private:
  struct Missing {
    int discoveries = 0;        // consecutive discoveries that did not find it
    Clock::time_point since{};  // last seen (by a discovery, or answering)
  };

  // merge's steps, under mu_.
  struct Draft;
  Draft start_draft(const Fabric& discovered) const;
  void add_seen_nodes(const Fabric& discovered, Draft& draft, MergeOutcome& out);
  void keep_missing_nodes(const Fabric& known, Draft& draft, Clock::time_point now,
                          MergeOutcome& out);

  mutable std::mutex mu_;
  ForgetPolicy policy_;
  std::shared_ptr<const Fabric> known_;
  std::unordered_map<std::uint64_t, Missing> missing_;
  std::vector<ForgottenNode> forgotten_;  // not yet taken
  Clock::time_point last_merge_{};        // when the known nodes were last seen
};

}  // namespace ibfx
