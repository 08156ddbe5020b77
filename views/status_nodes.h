// The status page's "Unhealthy nodes" table (docs/nodes.md): the hosts
// whose fabric health is not healthy (Snapshot::nodes), with their reason,
// since when, and the Slurm jobs running there, and how many hosts the
// blast-radius guard holds as a fabric incident.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/snapshot.h"

namespace ibfx {

struct StatusUnhealthyNode {
  std::string host;  // valid UTF-8, still untrusted
  std::string verdict;
  std::string reason;  // printable ASCII (nodes/node_health.h)
  double since = 0;
  double recover_at = 0;
  std::uint32_t rails_active = 0;
  std::uint32_t rails_expected = 0;
  std::optional<std::vector<std::string>> jobs;  // job_label(); nullopt: no job source
};

struct StatusUnhealthyNodes {
  std::vector<StatusUnhealthyNode> rows;  // unhealthy first, then incident; at most max_rows
  std::size_t unhealthy = 0;
  std::size_t incident = 0;
};

StatusUnhealthyNodes status_unhealthy_nodes(const Snapshot& s, std::size_t max_rows);

// The table's section of the page; `historic`: the page shows a past sweep
// (the history does not keep node verdicts).
void append_unhealthy_nodes_html(std::string& out, const StatusUnhealthyNodes& nodes,
                                 bool historic);

}  // namespace ibfx
