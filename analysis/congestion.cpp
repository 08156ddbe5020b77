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
                                         const CongestionConfig& config,
                                         const std::vector<std::uint8_t>& held) {
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
  // A port held as a root keeps lower thresholds (hysteresis).
  auto is_held = [&](std::size_t k) { return k < held.size() && held[k] != 0; };
  auto scale = [&](std::size_t k) { return is_held(k) ? config.hold_fraction : 1.0; };
  auto stalled = [&](std::size_t k) {
    return ports[k].valid && ports[k].stall >= config.stall_threshold;
  };
  auto saturated = [&](std::size_t k) {
    return ports[k].utilization_valid && ports[k].utilization >= config.saturation_threshold;
  };
  // Congested for the forest: its own thresholds, or the held ones.
  auto stalled_for_tree = [&](std::size_t k) {
    return ports[k].valid && ports[k].stall >= config.stall_threshold * scale(k);
  };
  auto full_for_tree = [&](std::size_t k) {
    return ports[k].utilization_valid &&
           ports[k].utilization >= config.saturation_threshold * scale(k);
  };
  // How congested a port is: its W if stalled, its U if saturated, else 0.
  auto severity = [&](std::size_t k) {
    double s = stalled_for_tree(k) ? ports[k].stall : 0;
    if (full_for_tree(k)) s = std::max(s, ports[k].utilization);
    return s;
  };
  // How close to the thresholds a port is, congested or not.
  auto evidence = [&](std::size_t k) {
    double e = ports[k].valid ? ports[k].stall / config.stall_threshold : 0;
    if (ports[k].utilization_valid) {
      e = std::max(e, ports[k].utilization / config.saturation_threshold);
    }
    return e;
  };
  // Parent of victims on evidence alone (no threshold reached), and whether
  // that evidence was its U (it is full) rather than its W.
  std::vector<std::uint8_t> by_evidence(ports.size(), 0);
  // Full, for the cause: saturated; or, below the threshold, held or named on
  // the evidence of its U, provided it is not stalled (a stalled port that is
  // not saturated refuses data: the held thresholds must not turn a slow
  // receiver that moves some data into an incast).
  auto full = [&](std::size_t k) {
    if (saturated(k)) return true;
    if (stalled(k)) return false;
    if (full_for_tree(k)) return true;
    return by_evidence[k] != 0 && ports[k].utilization_valid &&
           ports[k].utilization / config.saturation_threshold >=
               (ports[k].valid ? ports[k].stall / config.stall_threshold : 0);
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

  // Each stalled port's parent: a port of the node at the other end of its
  // cable that its traffic can leave through. In this order: the most
  // congested towards the victim's own rail, the markedly busiest towards its
  // rail, the most congested of all, the markedly busiest of all (see
  // docs/scores.md: traffic of rail r that entered a spine from a rail-r
  // switch descends only towards rail r).
  std::vector<std::size_t> candidates;
  std::vector<std::uint8_t> on_rail;
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
    // The rail the victim's traffic belongs to: the one rail its node serves.
    const int rail = a < topo.single_rail.size() ? topo.single_rail[a] : kNoRail;
    candidates.clear();
    on_rail.clear();
    for (std::size_t q = 0; q < at[b].size(); ++q) {
      const std::size_t qk = at[b][q];
      if (q == arrival || qk == kNoPort || !may_leave(arrived, topo.direction[b][q])) continue;
      candidates.push_back(qk);
      bool same = true;
      const std::int32_t towards = fabric.nodes[b].ports[q].remote_node;
      if (rail != kNoRail && topo.direction[b][q] == PortDirection::kDown && towards >= 0 &&
          static_cast<std::size_t>(towards) < n) {
        const int theirs = topo.single_rail[static_cast<std::size_t>(towards)];
        same = theirs == kNoRail || theirs == rail;
      }
      on_rail.push_back(same ? 1 : 0);
    }
    auto most_congested = [&](bool rail_only) {
      double best = 0;
      std::size_t pick = kNoPort;
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        if (rail_only && !on_rail[c]) continue;
        const double s = severity(candidates[c]);
        if (s > best) {
          best = s;
          pick = candidates[c];
        }
      }
      return pick;
    };
    auto markedly_busiest = [&](bool rail_only) {
      double best = 0, second = 0;
      std::size_t pick = kNoPort;
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        if (rail_only && !on_rail[c]) continue;
        const double e = evidence(candidates[c]);
        if (e > best) {
          second = best;
          best = e;
          pick = candidates[c];
        } else {
          second = std::max(second, e);
        }
      }
      if (best < config.evidence_floor || best < config.evidence_margin * second) return kNoPort;
      return pick;
    };
    std::size_t parent = most_congested(true);
    if (parent == kNoPort) parent = markedly_busiest(true);
    if (parent == kNoPort) {
      parent = most_congested(false);
      if (parent == kNoPort) parent = markedly_busiest(false);
    } else if (const std::size_t any = most_congested(false);
               any != kNoPort && severity(any) > severity(parent)) {
      ++f.rail_kept;
    }
    if (parent != kNoPort && severity(parent) <= 0) by_evidence[parent] = 1;
    f.parent[k] = parent;
  }
  // Follow each chain to its end; a cycle (possible only over peer links)
  // roots nothing.
  enum : std::uint8_t { kOpen, kWalking, kDone };
  std::vector<std::uint8_t> state(ports.size(), kOpen);
  std::vector<std::size_t> path;
  for (std::size_t k = 0; k < count; ++k) {
    if (state[k] == kDone || (severity(k) <= 0 && !by_evidence[k])) continue;
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
    if (!stalled_for_tree(k) && r.victims == 0) {
      f.root[k] = kNoPort;
      continue;
    }
    r.port = k;
    r.held = is_held(k);
    r.by_evidence = by_evidence[k] != 0 && severity(k) <= 0;
    r.score += r.by_evidence ? std::max(ports[k].stall, ports[k].utilization) : severity(k);
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
    if (narrow || (errors && !full(k))) {
      r.cause = CongestionCause::kDegradedLink;
    } else if (full(k)) {
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
