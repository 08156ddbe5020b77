// What one sweep found: per node, whether it was reached and answered, and
// the sweep's own totals. Plain data (the sweep is sweep/sweeper.h), so that
// the snapshot, the analysis and the views can read a sweep's outcome
// without seeing how it was taken.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibfx {

struct NodeSweep {
  bool swept = false;  // in this daemon's share, addressable, and with a known state
  // Every query to it completed (answered, or out of retries) before the
  // budget ran out. A node the budget did not let us finish is not asked,
  // which says nothing about it: it keeps the state of the last sweep that
  // reached it (stale), and is asked first next time.
  bool reached = false;
  bool stale = false;
  // Up: it answered PMA queries at its LID (the last time it was reached).
  // Ports whose reads were lost keep their last totals; a node is down only
  // when it was asked and answered nothing, after the retries.
  bool answered = false;
  // The sweep's NodeInfo SMP to its LID named it: the LID is still its own.
  // Without an SMP-capable transport, answering counts as confirmation.
  bool lid_confirmed = false;
  std::uint32_t failed_mads = 0;    // out of retries or error status
  std::uint32_t answered_mads = 0;  // PMA answers with status 0
  std::uint32_t cut_mads = 0;       // cancelled by the budget
  // The node's LID now answers as another node or port: readings dropped.
  bool lid_moved = false;
  // It answered when last reached and answered nothing now: unplugged, or
  // powered off (a topology change worth a spaced rediscovery).
  bool went_silent = false;

  // Down: asked and silent. A node the budget did not let the sweep finish
  // is not down (it keeps the state of the last sweep that reached it).
  bool not_answering() const { return swept && reached && !answered; }
};

// The nodes of a sweep that are down (NodeSweep::not_answering()).
inline std::size_t count_not_answering(const std::vector<NodeSweep>& nodes) {
  std::size_t n = 0;
  for (const NodeSweep& ns : nodes) n += ns.not_answering() ? 1 : 0;
  return n;
}

// A sweep's own totals: when, how long, how complete, how many MADs. What
// the snapshot keeps of a sweep (Snapshot::sweep_totals) once its per-node
// results have moved into Snapshot::node_status.
struct SweepTotals {
  std::chrono::system_clock::time_point started_at{};
  double duration_seconds = 0;
  bool completed = true;  // false when the budget cut it short
  std::uint64_t mads_sent = 0;
  std::uint64_t mads_ok = 0;
  std::uint64_t mads_timeout = 0;
  std::uint64_t mads_error = 0;
  std::uint64_t clears_sent = 0;
  std::size_t ports_read = 0;
  std::size_t lid_mismatches = 0;  // LIDs found answering as another node or port
  // Round robin: nodes the budget did not let this sweep finish (their
  // readings and node_up are those of an earlier sweep), and the age of
  // the oldest reading among the nodes to sweep.
  std::size_t stale_nodes = 0;
  double oldest_reading_age_seconds = 0;
  // Optional MADs not sent because SweepOptions::guard protects the node.
  std::size_t probes_withheld = 0;
  // Opt-in group attributes probed this sweep, and port reads of them.
  std::size_t optional_probes = 0;
  std::size_t optional_reads = 0;
  std::size_t clears_withheld = 0;
};

struct SweepResult : SweepTotals {
  std::vector<NodeSweep> nodes;              // parallel to Fabric::nodes
  std::vector<std::vector<bool>> port_read;  // [node][port index]: read this sweep
};

}  // namespace ibfx
