#include "analysis/congestion.h"

#include <algorithm>
#include <tuple>

namespace ibfx {
namespace {

std::uint32_t index_of_port(const FabricNode& node, std::uint8_t number) {
  for (std::size_t j = 0; j < node.ports.size(); ++j) {
    if (node.ports[j].number == number) return static_cast<std::uint32_t>(j);
  }
  return UINT32_MAX;
}

// Mean U of a switch's up ports below which their imbalance is not reported.
constexpr double kImbalanceMinUtilization = 0.01;

// Can traffic that crossed a link in `arrived` direction (as seen from the
// sender's port) leave the receiving node through a port pointing `out`?
// Up*/Down* routing, as a fat tree routes: traffic that came down keeps going
// down; traffic that came up (from an HCA or a lower switch) may climb on or
// turn down. Peer and unclassified links constrain nothing.
bool may_leave(PortDirection arrived, PortDirection out) {
  if (out == PortDirection::kNone) return false;
  if (arrived == PortDirection::kDown) return out == PortDirection::kDown;
  return true;
}

}  // namespace

std::string_view cause_name(CongestionCause cause) {
  switch (cause) {
    case CongestionCause::kIncast:
      return "incast";
    case CongestionCause::kOversubscribed:
      return "oversubscribed";
    case CongestionCause::kRoutingImbalance:
      return "routing_imbalance";
    case CongestionCause::kSlowReceiver:
      return "slow_receiver";
    case CongestionCause::kDegradedLink:
      return "degraded_link";
    case CongestionCause::kUnexplained:
      break;
  }
  return "unexplained";
}

CongestionForest build_congestion_forest(const Topology& topo, const Fabric& fabric,
                                         const std::vector<PortScore>& ports,
                                         const std::vector<PortSample>& samples,
                                         const CongestionConfig& config) {
  CongestionForest f;
  const std::size_t count = std::min(ports.size(), samples.size());
  f.parent.assign(ports.size(), kNoPort);
  f.root.assign(ports.size(), kNoPort);
  const std::size_t n = std::min({fabric.nodes.size(), topo.tier.size(), topo.direction.size()});

  // Where each analysed port sits: at[node][port index] -> index into ports.
  std::vector<std::vector<std::size_t>> at(n);
  for (std::size_t k = 0; k < count; ++k) {
    const PortScore& p = ports[k];
    if (p.node < 0 || static_cast<std::size_t>(p.node) >= n) continue;
    const auto node = static_cast<std::size_t>(p.node);
    const std::size_t size = std::min(fabric.nodes[node].ports.size(), topo.direction[node].size());
    if (p.port_index >= size) continue;
    if (at[node].empty()) at[node].assign(size, kNoPort);
    at[node][p.port_index] = k;
  }
  auto stalled = [&](std::size_t k) {
    return ports[k].valid && ports[k].stall >= config.stall_threshold;
  };
  auto saturated = [&](std::size_t k) {
    return ports[k].utilization_valid && ports[k].utilization >= config.saturation_threshold;
  };
  // How congested a port is: its W if stalled, its U if saturated, else 0.
  auto severity = [&](std::size_t k) {
    double s = stalled(k) ? ports[k].stall : 0;
    if (saturated(k)) s = std::max(s, ports[k].utilization);
    return s;
  };

  // Uplink imbalance per switch: max / mean of the up ports' bytes.
  std::vector<double> imbalance(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (topo.tier[i] == Tier::kHca || at[i].empty()) continue;
    std::uint64_t sum = 0, max = 0;
    std::size_t ups = 0;
    double utilization = 0;
    for (std::size_t j = 0; j < at[i].size(); ++j) {
      if (at[i][j] == kNoPort || topo.direction[i][j] != PortDirection::kUp) continue;
      const std::uint64_t bytes = samples[at[i][j]].xmit_data_words * 4;
      sum += bytes;
      max = std::max(max, bytes);
      utilization += ports[at[i][j]].utilization;
      ++ups;
    }
    // Uplinks that carry next to nothing (management traffic) have no
    // meaningful balance.
    if (ups < 2 || sum == 0 || utilization / static_cast<double>(ups) < kImbalanceMinUtilization) {
      continue;
    }
    imbalance[i] = static_cast<double>(max) * static_cast<double>(ups) / static_cast<double>(sum);
    f.imbalance.push_back({static_cast<std::int32_t>(i), ups, imbalance[i]});
  }

  // Each stalled port's parent: the most congested port of the node at the
  // other end of its cable that its traffic can leave through.
  for (std::size_t k = 0; k < count; ++k) {
    if (saturated(k)) ++f.saturated;
    if (!stalled(k)) continue;
    ++f.stalled;
    if (ports[k].node < 0 || static_cast<std::size_t>(ports[k].node) >= n) continue;
    const auto a = static_cast<std::size_t>(ports[k].node);
    const FabricPort& p = fabric.nodes[a].ports[ports[k].port_index];
    if (p.remote_node < 0 || static_cast<std::size_t>(p.remote_node) >= n) continue;
    const auto b = static_cast<std::size_t>(p.remote_node);
    if (topo.tier[b] == Tier::kHca) continue;  // an HCA is where traffic ends
    const std::uint32_t arrival = index_of_port(fabric.nodes[b], p.remote_port);
    const PortDirection arrived = topo.direction[a][ports[k].port_index];
    double best = 0;
    for (std::size_t q = 0; q < at[b].size(); ++q) {
      const std::size_t qk = at[b][q];
      if (q == arrival || qk == kNoPort || !may_leave(arrived, topo.direction[b][q])) continue;
      const double s = severity(qk);
      if (s > best) {
        best = s;
        f.parent[k] = qk;
      }
    }
  }

  // Follow each chain to its end; a cycle (possible only over peer links)
  // roots nothing.
  enum : std::uint8_t { kOpen, kWalking, kDone };
  std::vector<std::uint8_t> state(ports.size(), kOpen);
  std::vector<std::size_t> path;
  for (std::size_t k = 0; k < count; ++k) {
    if (state[k] == kDone || severity(k) <= 0) continue;
    path.clear();
    std::size_t cur = k;
    while (state[cur] == kOpen && f.parent[cur] != kNoPort) {
      state[cur] = kWalking;
      path.push_back(cur);
      cur = f.parent[cur];
    }
    std::size_t end = kNoPort;
    if (state[cur] == kDone) {
      end = f.root[cur];
    } else if (state[cur] == kOpen) {  // the chain's last port: no parent
      end = cur;
      f.root[cur] = cur;
      state[cur] = kDone;
    }  // else: back on this walk, a cycle
    for (std::size_t v : path) {
      f.root[v] = end;
      state[v] = kDone;
    }
  }

  // Tally victims per chain end; a saturated port is a root only when it has
  // victims (else it is merely busy), a stalled one always.
  std::vector<CongestionRoot> acc(count);
  for (std::size_t k = 0; k < count; ++k) {
    if (f.parent[k] == kNoPort || f.root[k] == kNoPort) continue;
    CongestionRoot& r = acc[f.root[k]];
    ++r.victims;
    r.score += ports[k].stall;
    ++f.victims;
  }
  for (std::size_t k = 0; k < count; ++k) {
    if (f.root[k] != k) continue;
    CongestionRoot r = acc[k];
    if (!stalled(k) && r.victims == 0) {
      f.root[k] = kNoPort;
      continue;
    }
    r.port = k;
    r.score += severity(k);
    const auto a = static_cast<std::size_t>(ports[k].node);
    const FabricNode& node = fabric.nodes[a];
    const FabricPort& p = node.ports[ports[k].port_index];
    const bool into_hca = p.remote_node >= 0 && static_cast<std::size_t>(p.remote_node) < n &&
                          topo.tier[static_cast<std::size_t>(p.remote_node)] == Tier::kHca;
    // Below the node's best link: trained to fewer lanes or a lower speed.
    bool narrow = false;
    for (const FabricPort& other : node.ports) {
      if (!other.linked() || !other.up()) continue;
      narrow = narrow || link_width_lanes(other.width_active) > link_width_lanes(p.width_active) ||
               link_lane_gbps(other) > link_lane_gbps(p);
    }
    const bool errors = samples[k].error_count > 0;
    if (narrow || (errors && !saturated(k))) {
      r.cause = CongestionCause::kDegradedLink;
    } else if (saturated(k)) {
      if (into_hca) {
        r.cause = CongestionCause::kIncast;
      } else if (ports[k].direction == PortDirection::kUp &&
                 imbalance[a] >= config.imbalance_threshold) {
        r.cause = CongestionCause::kRoutingImbalance;
      } else {
        r.cause = CongestionCause::kOversubscribed;
      }
    } else {
      r.cause = into_hca ? CongestionCause::kSlowReceiver : CongestionCause::kUnexplained;
    }
    f.roots.push_back(r);
  }
  std::sort(f.roots.begin(), f.roots.end(), [](const CongestionRoot& x, const CongestionRoot& y) {
    return std::tuple(-x.score, x.port) < std::tuple(-y.score, y.port);
  });
  if (f.roots.size() > config.top_k) f.roots.resize(config.top_k);
  return f;
}

}  // namespace ibfx
