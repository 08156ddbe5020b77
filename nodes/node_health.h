// A node's fabric health by host (issue #43, docs/nodes.md), what Slurm's
// health check asks the daemon: each host's HCA ports (found as jobs/ finds
// them: jobs.host_regex, jobs.host_map) with their link condition, its rail
// completeness against its peers, and one verdict with a one-line reason
// fit for a Slurm drain reason. Computed once per sweep into the snapshot,
// so that /nodes/<host> answers for 16k hosts without sending a MAD. The
// only state kept between sweeps is each unhealthy host's spell: sticky
// recovery (nodes.recover_after) and the blast-radius guard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/link_condition.h"
#include "analysis/topology.h"
#include "base/slurm_node.h"
#include "config/config.h"
#include "fabric/fabric.h"
#include "jobs/job_join.h"
#include "links/link_report.h"

namespace ibfx {

enum class NodeVerdict : std::uint8_t { kHealthy, kUnhealthy, kIncident, kUnknown };

// "healthy", "unhealthy", "fabric incident", "unknown".
std::string_view node_verdict_name(NodeVerdict v);

struct HcaPortHealth {
  std::int32_t node = kNoNode;  // index into the fabric's nodes
  std::uint32_t port_index = 0;
  std::uint8_t port = 0;  // port number
  // The node description after the host ("mlx5_3"), made safe
  // (safe_node_word): descriptions are untrusted.
  std::string device;
  int rail = kNoRail;
  bool active = false;  // present, physically up, not a down link
  LinkCondition condition = LinkCondition::kNone;
  double condition_since = 0;  // Unix seconds; 0: no condition
  double ber = -1;             // symbol BER into this port; < 0: no error in the window
  std::uint32_t downs_last_hour = 0;
  std::int32_t far_node = kNoNode;  // the switch (or HCA) it is cabled to
  std::uint8_t far_port = 0;
};

struct HostHealth {
  std::string host;  // the Slurm node name
  NodeVerdict verdict = NodeVerdict::kHealthy;
  // Empty when healthy; else one line, kNodeReasonPrefix first, printable
  // ASCII, no quote, at most kNodeReasonMax bytes.
  std::string reason;
  double since = 0;       // Unix seconds this unhealthy spell began (0: healthy)
  double recover_at = 0;  // > 0: faults cleared, unhealthy until then (nodes.recover_after)
  std::uint32_t rails_active = 0;
  std::uint32_t rails_expected = 0;  // the modal count of its peers' HCA ports, at least its own
  std::vector<HcaPortHealth> ports;  // by device, then port number
};

struct NodeHealthReport {
  std::vector<HostHealth> hosts;  // every host with an HCA, by name
  std::size_t unhealthy = 0;      // verdict kUnhealthy
  std::size_t incident = 0;       // verdict kIncident
  double recover_after_seconds = 0;
  double stale_after_seconds = 0;
  // The host named `host`, or null (binary search).
  const HostHealth* find(std::string_view host) const;
};

// The peers of a host: the hosts whose names differ only in their digits
// ("gpu0017" and "gpu0018"; "stor03" is not their peer), Slurm's way of
// naming nodes of one kind.
std::string host_family(std::string_view host);

class NodeHealthTracker {
 public:
  // Throws ConfigError for a host_regex that does not compile.
  NodeHealthTracker(JobJoinConfig hosts, NodesConfig config);

  // A reload: `fresh`'s settings, this one's spells (a host drained for a
  // cable stays so).
  void take_settings(NodeHealthTracker&& fresh);

  // Sweep thread. `names`: the nodes' display names (parallel to the
  // fabric's nodes); `topology` may be null (no rails). `now`: Unix seconds.
  std::shared_ptr<const NodeHealthReport> judge(const std::shared_ptr<const Fabric>& fabric,
                                                const LinkHealthReport& links,
                                                const std::vector<std::string>& names,
                                                const Topology* topology, double now);

 private:
  struct Spell {
    double since = 0;       // the host turned unhealthy
    double last_fault = 0;  // the last sweep that saw a fault
    bool incident = false;  // the blast-radius guard explained it
    std::string reason;     // the last fault's reason
  };
  // The unhealthy links and the BER at each HCA port (node_health.cpp).
  struct LinkIndex;
  using Hosts = std::map<std::string, HostHealth>;

  std::string host_of(const std::string& description) const;
  // judge()'s steps, in its order.
  Hosts collect_hosts(const Fabric& f, const LinkIndex& links, const Topology* topology) const;
  void update_spells(Hosts& hosts, const Fabric& f, const std::vector<std::string>& names,
                     double now);
  std::size_t mark_incidents(std::size_t hosts, double now);
  void give_verdicts(Hosts& hosts, std::size_t incident_hosts, double now,
                     NodeHealthReport& report) const;

  JobJoinConfig hosts_;
  NodesConfig config_;
  std::regex host_re_;
  std::unordered_map<std::string, std::string> slurm_name_;  // description host -> Slurm name
  std::unordered_map<std::string, Spell> spells_;            // unhealthy hosts
};

}  // namespace ibfx
