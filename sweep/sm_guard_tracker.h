// The SmGuard of each sweep (sweep/sm_guard.h, docs/safety.md) and
// what the operator is told about it: which node gets no optional MAD and
// why, once per node and reason rather than every sweep; the opt-out
// (counters.probe_sm_and_local_ports) and an unknown master SM LID once.
// Sweep thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/log_line.h"
#include "config/config.h"
#include "config/node_name_map.h"
#include "fabric/fabric.h"
#include "mad/mad_transport.h"
#include "sweep/sm_guard.h"

namespace ibfx {

class SmGuardTracker {
 public:
  struct Result {
    SmGuard guard;
    std::vector<LogLine> lines;  // to log: what changed since the last sweep
  };
  // For a sweep of `fabric` from the port `local`; `probe_all` is the
  // opt-out (counters.probe_sm_and_local_ports: nothing is guarded);
  // `names` (the node-name-map) names the nodes in the lines.
  Result next(const Fabric& fabric, const LocalPort& local, bool probe_all,
              const NodeNameMap& names);

 private:
  std::map<std::uint64_t, std::string> guarded_;  // the nodes last logged, and why
  bool opted_out_logged_ = false;
  bool sm_lid_unknown_logged_ = false;
};

}  // namespace ibfx
