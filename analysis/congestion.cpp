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
    case CongestionCause::kFlowCollision:
      return "flow_collision";
    case CongestionCause::kUnevenUplinks:
      return "uneven_uplinks";
    case CongestionCause::kUnexplained:
      break;
  }
  return "unexplained";
}

namespace {

// build_congestion_forest's steps over one interval's ports (docs/scores.md,
// "Root or victim"): where each port sits, each switch's uplink balance,
// each stalled port's parent, the chains to their roots, the roots and their
// causes.
class ForestBuilder {
 public:
  ForestBuilder(const Topology& topo, const Fabric& fabric, const std::vector<PortScore>& ports,
                const std::vector<PortSample>& samples, const CongestionConfig& config,
                const RootMemory& memory, const RouteEvidence* routes)
      : topo_(topo),
        fabric_(fabric),
        ports_(ports),
        samples_(samples),
        config_(config),
        memory_(memory),
        routes_(routes),
        count_(std::min(ports.size(), samples.size())),
        nodes_(std::min({fabric.nodes.size(), topo.tier.size(), topo.direction.size()})),
        by_evidence_(ports.size(), 0) {}

  CongestionForest build() {
    f_.parent.assign(ports_.size(), kNoPort);
    f_.root.assign(ports_.size(), kNoPort);
    locate_ports();
    measure_uplink_imbalance();
    choose_parents();
    follow_chains();
    collect_roots();
    return std::move(f_);
  }

 private:
  bool is_held(std::size_t k) const { return k < memory_.held.size() && memory_.held[k] != 0; }
  // A port held as a root keeps lower thresholds (hysteresis).
  double scale(std::size_t k) const { return is_held(k) ? config_.hold_fraction : 1.0; }
  bool stalled(std::size_t k) const {
    return ports_[k].valid && ports_[k].stall >= config_.stall_threshold;
  }
  bool saturated(std::size_t k) const {
    return ports_[k].utilization_valid && ports_[k].utilization >= config_.saturation_threshold;
  }
  // Congested for the forest: its own thresholds, or the held ones.
  bool stalled_for_tree(std::size_t k) const {
    return ports_[k].valid && ports_[k].stall >= config_.stall_threshold * scale(k);
  }
  bool full_for_tree(std::size_t k) const {
    return ports_[k].utilization_valid &&
           ports_[k].utilization >= config_.saturation_threshold * scale(k);
  }
  // How congested a port is: its W if stalled, its U if saturated, else 0.
  double severity(std::size_t k) const {
    double s = stalled_for_tree(k) ? ports_[k].stall : 0;
    if (full_for_tree(k)) s = std::max(s, ports_[k].utilization);
    return s;
  }
  // How close to the thresholds a port is, congested or not.
  double evidence(std::size_t k) const {
    double e = ports_[k].valid ? ports_[k].stall / config_.stall_threshold : 0;
    if (ports_[k].utilization_valid) {
      e = std::max(e, ports_[k].utilization / config_.saturation_threshold);
    }
    return e;
  }
  // The share of the interval a port was busy: transmitting (U) or waiting
  // to (W). A port upstream cannot have waited on it for longer.
  double busy(std::size_t k) const {
    const double u = ports_[k].utilization_valid ? ports_[k].utilization : 0;
    const double w = ports_[k].valid ? ports_[k].stall : 0;
    return std::min(1.0, u + w);
  }
  // Full, for the cause: saturated; or, below the threshold, held or named on
  // the evidence of its U, provided it is not stalled (a stalled port that is
  // not saturated refuses data: the held thresholds must not turn a slow
  // receiver that moves some data into an incast).
  bool full(std::size_t k) const {
    if (saturated(k)) return true;
    if (stalled(k)) return false;
    if (full_for_tree(k)) return true;
    return by_evidence_[k] != 0 && ports_[k].utilization_valid &&
           ports_[k].utilization / config_.saturation_threshold >=
               (ports_[k].valid ? ports_[k].stall / config_.stall_threshold : 0);
  }

  // Where each analysed port sits: at_[node][port index] -> index into ports.
  void locate_ports() {
    at_.resize(nodes_);
    for (std::size_t k = 0; k < count_; ++k) {
      const PortScore& p = ports_[k];
      if (p.node < 0 || static_cast<std::size_t>(p.node) >= nodes_) continue;
      const auto node = static_cast<std::size_t>(p.node);
      const std::size_t size =
          std::min(fabric_.nodes[node].ports.size(), topo_.direction[node].size());
      if (p.port_index >= size) continue;
      if (at_[node].empty()) at_[node].assign(size, kNoPort);
      at_[node][p.port_index] = k;
    }
  }

  // Uplink imbalance per switch: max / mean of the up ports' bytes.
  void measure_uplink_imbalance() {
    imbalance_.assign(nodes_, 0);
    for (std::size_t i = 0; i < nodes_; ++i) {
      if (topo_.tier[i] == Tier::kHca || at_[i].empty()) continue;
      std::uint64_t sum = 0, max = 0;
      std::size_t ups = 0;
      double utilization = 0;
      for (std::size_t j = 0; j < at_[i].size(); ++j) {
        if (at_[i][j] == kNoPort || topo_.direction[i][j] != PortDirection::kUp) continue;
        const std::uint64_t bytes = samples_[at_[i][j]].xmit_data_words * 4;
        sum += bytes;
        max = std::max(max, bytes);
        utilization += ports_[at_[i][j]].utilization;
        ++ups;
      }
      // Uplinks that carry next to nothing (management traffic) have no
      // meaningful balance.
      if (ups < 2 || sum == 0 ||
          utilization / static_cast<double>(ups) < kImbalanceMinUtilization) {
        continue;
      }
      imbalance_[i] =
          static_cast<double>(max) * static_cast<double>(ups) / static_cast<double>(sum);
      f_.imbalance.push_back({static_cast<std::int32_t>(i), ups, imbalance_[i]});
    }
  }

  // The ports of the node at the far end of stalled port k's cable that its
  // traffic can leave through (candidates_), and whether each leads towards
  // k's own rail (on_rail_). False when k's cable ends at an HCA (where
  // traffic ends) or outside the analysed fabric.
  bool gather_candidates(std::size_t k) {
    candidates_.clear();
    on_rail_.clear();
    if (ports_[k].node < 0 || static_cast<std::size_t>(ports_[k].node) >= nodes_) return false;
    const auto a = static_cast<std::size_t>(ports_[k].node);
    const FabricPort& p = fabric_.nodes[a].ports[ports_[k].port_index];
    if (p.remote_node < 0 || static_cast<std::size_t>(p.remote_node) >= nodes_) return false;
    const auto b = static_cast<std::size_t>(p.remote_node);
    if (topo_.tier[b] == Tier::kHca) return false;
    const std::uint32_t arrival = index_of_port(fabric_.nodes[b], p.remote_port);
    const PortDirection arrived = topo_.direction[a][ports_[k].port_index];
    // The rail the victim's traffic belongs to: the one rail its node serves.
    const int rail = a < topo_.single_rail.size() ? topo_.single_rail[a] : kNoRail;
    for (std::size_t q = 0; q < at_[b].size(); ++q) {
      const std::size_t qk = at_[b][q];
      if (q == arrival || qk == kNoPort || !may_leave(arrived, topo_.direction[b][q])) continue;
      candidates_.push_back(qk);
      bool same = true;
      const std::int32_t towards = fabric_.nodes[b].ports[q].remote_node;
      if (rail != kNoRail && topo_.direction[b][q] == PortDirection::kDown && towards >= 0 &&
          static_cast<std::size_t>(towards) < nodes_) {
        const int theirs = topo_.single_rail[static_cast<std::size_t>(towards)];
        same = theirs == kNoRail || theirs == rail;
      }
      on_rail_.push_back(same ? 1 : 0);
    }
    return true;
  }

  std::size_t most_congested(bool rail_only) const {
    double best = 0;
    std::size_t pick = kNoPort;
    for (std::size_t c = 0; c < candidates_.size(); ++c) {
      if (rail_only && !on_rail_[c]) continue;
      const double s = severity(candidates_[c]);
      if (s > best) {
        best = s;
        pick = candidates_[c];
      }
    }
    return pick;
  }

  // The candidate markedly busier than the others (evidence_margin), when
  // its evidence reaches evidence_floor, or, below the floor and given a
  // `victim_stall`, when it was busy at least as long as the victim waited: at a
  // tree's first and last interval, partial ones, the root's U and its
  // victims' W are the same fraction of their steady values.
  std::size_t markedly_busiest(bool rail_only, double victim_stall = -1) const {
    double best = 0, second = 0;
    std::size_t pick = kNoPort;
    for (std::size_t c = 0; c < candidates_.size(); ++c) {
      if (rail_only && !on_rail_[c]) continue;
      const double e = evidence(candidates_[c]);
      if (e > best) {
        second = best;
        best = e;
        pick = candidates_[c];
      } else {
        second = std::max(second, e);
      }
    }
    if (pick == kNoPort || best < config_.evidence_margin * second) return kNoPort;
    if (best >= config_.evidence_floor || (victim_stall >= 0 && busy(pick) >= victim_stall)) {
      return pick;
    }
    return kNoPort;
  }

  // Each stalled port's parent: a port of the node at the other end of its
  // cable that its traffic can leave through. In this order: the most
  // congested towards the victim's own rail, the markedly busiest towards its
  // rail, the most congested of all, the markedly busiest of all (see
  // docs/scores.md: traffic of rail r that entered a spine from a rail-r
  // switch descends only towards rail r); failing all, the root of the tree
  // it was in the previous sweep, while that tree may keep it.
  void choose_parents() {
    for (std::size_t k = 0; k < count_; ++k) {
      if (saturated(k)) ++f_.saturated;
      if (!stalled(k)) continue;
      ++f_.stalled;
      std::size_t parent = kNoPort;
      if (gather_candidates(k)) {
        const double w = ports_[k].stall;
        parent = most_congested(true);
        if (parent == kNoPort) parent = markedly_busiest(true);
        if (parent == kNoPort) {
          parent = most_congested(false);
          if (parent == kNoPort) parent = markedly_busiest(false);
          // Proportional evidence last: only where nothing congested or
          // above the floor explains the stall (a hop with one candidate
          // towards the rail is trivially "markedly busiest").
          if (parent == kNoPort) parent = markedly_busiest(true, w);
          if (parent == kNoPort) parent = markedly_busiest(false, w);
        } else if (const std::size_t any = most_congested(false);
                   any != kNoPort && severity(any) > severity(parent)) {
          ++f_.rail_kept;
        }
        if (parent != kNoPort && severity(parent) <= 0) by_evidence_[parent] = 1;
      }
      // Only a decaying tree keeps its victims: a remembered root that is
      // congested itself this interval explains nothing by memory (two
      // stalled ports would otherwise keep each other's trees alive).
      if (parent == kNoPort && k < memory_.tree.size() && memory_.tree[k] < count_ &&
          memory_.tree[k] != k && severity(memory_.tree[k]) <= 0) {
        parent = memory_.tree[k];
        ++f_.kept_in_tree;
      }
      f_.parent[k] = parent;
    }
  }

  // Follow each chain to its end; a cycle (possible only over peer links)
  // roots nothing.
  void follow_chains() {
    enum : std::uint8_t { kOpen, kWalking, kDone };
    std::vector<std::uint8_t> state(ports_.size(), kOpen);
    std::vector<std::size_t> path;
    for (std::size_t k = 0; k < count_; ++k) {
      if (state[k] == kDone || (severity(k) <= 0 && !by_evidence_[k])) continue;
      path.clear();
      std::size_t cur = k;
      while (state[cur] == kOpen && f_.parent[cur] != kNoPort) {
        state[cur] = kWalking;
        path.push_back(cur);
        cur = f_.parent[cur];
      }
      std::size_t end = kNoPort;
      if (state[cur] == kDone) {
        end = f_.root[cur];
      } else if (state[cur] == kOpen) {  // the chain's last port: no parent
        end = cur;
        f_.root[cur] = cur;
        state[cur] = kDone;
      }  // else: back on this walk, a cycle
      for (std::size_t v : path) {
        f_.root[v] = end;
        state[v] = kDone;
      }
    }
  }

  CongestionCause cause_of(std::size_t k, const CongestionRoot& r) const {
    if (r.continued && is_held(k) && k < memory_.held_cause.size()) return memory_.held_cause[k];
    const auto a = static_cast<std::size_t>(ports_[k].node);
    const FabricNode& node = fabric_.nodes[a];
    const FabricPort& p = node.ports[ports_[k].port_index];
    const bool into_hca = p.remote_node >= 0 && static_cast<std::size_t>(p.remote_node) < nodes_ &&
                          topo_.tier[static_cast<std::size_t>(p.remote_node)] == Tier::kHca;
    // Below the node's best link: trained to fewer lanes or a lower speed.
    bool narrow = false;
    for (const FabricPort& other : node.ports) {
      if (!other.linked() || !other.up()) continue;
      narrow = narrow || link_width_lanes(other.width_active) > link_width_lanes(p.width_active) ||
               link_lane_gbps(other) > link_lane_gbps(p);
    }
    const bool errors = samples_[k].error_count > 0;
    if (narrow || (errors && !full(k))) return CongestionCause::kDegradedLink;
    if (full(k)) {
      if (into_hca) return CongestionCause::kIncast;
      if (ports_[k].direction == PortDirection::kUp &&
          imbalance_[a] >= config_.imbalance_threshold) {
        return uplink_cause(r);
      }
      return CongestionCause::kOversubscribed;
    }
    return into_hca ? CongestionCause::kSlowReceiver : CongestionCause::kUnexplained;
  }

  // A saturated up port whose switch's up ports carry uneven bytes: the
  // routing, if its table puts more destinations on this port than on its
  // peers (by imbalance_threshold, the same factor as the bytes'); else a
  // collision of a few heavy flows on balanced routes; or, with no table,
  // not known (docs/scores.md, "Routing or traffic").
  CongestionCause uplink_cause(const CongestionRoot& r) const {
    if (r.routes < 0 || r.peer_routes < 0) return CongestionCause::kUnevenUplinks;
    const auto routes = static_cast<double>(r.routes);
    return routes > 0 && routes >= config_.imbalance_threshold * r.peer_routes
               ? CongestionCause::kRoutingImbalance
               : CongestionCause::kFlowCollision;
  }

  // The route evidence of root port k: its destinations, and for an up
  // port the mean of the switch's other up ports (active links only).
  void add_route_evidence(std::size_t k, CongestionRoot& r) const {
    if (routes_ == nullptr) return;
    const auto a = static_cast<std::size_t>(ports_[k].node);
    const std::vector<std::uint32_t>* per_port = routes_->of(a);
    const std::size_t i = ports_[k].port_index;
    if (per_port == nullptr || i >= per_port->size()) return;
    r.routes = (*per_port)[i];
    if (ports_[k].direction != PortDirection::kUp) return;
    const FabricNode& node = fabric_.nodes[a];
    double sum = 0;
    std::size_t peers = 0;
    for (std::size_t j = 0; j < node.ports.size() && j < per_port->size(); ++j) {
      if (j == i || topo_.direction[a][j] != PortDirection::kUp) continue;
      if (!node.ports[j].linked() || !node.ports[j].up()) continue;
      sum += (*per_port)[j];
      ++peers;
    }
    if (peers > 0) r.peer_routes = sum / static_cast<double>(peers);
  }

  // Tally victims per chain end; a saturated port is a root only when it has
  // victims (else it is merely busy), a stalled one always.
  void collect_roots() {
    std::vector<CongestionRoot> acc(count_);
    for (std::size_t k = 0; k < count_; ++k) {
      if (f_.parent[k] == kNoPort || f_.root[k] == kNoPort) continue;
      CongestionRoot& r = acc[f_.root[k]];
      ++r.victims;
      r.score += ports_[k].stall;
      ++f_.victims;
    }
    std::vector<CongestionRoot> roots;
    for (std::size_t k = 0; k < count_; ++k) {
      if (f_.root[k] != k) continue;
      CongestionRoot r = acc[k];
      if (!stalled_for_tree(k) && r.victims == 0) {
        f_.root[k] = kNoPort;
        continue;
      }
      r.port = k;
      r.held = is_held(k);
      r.by_evidence = by_evidence_[k] != 0 && severity(k) <= 0;
      r.continued = !r.by_evidence && severity(k) <= 0;
      r.score += r.by_evidence || r.continued ? std::max(ports_[k].stall, ports_[k].utilization)
                                              : severity(k);
      add_route_evidence(k, r);
      r.cause = cause_of(k, r);
      roots.push_back(r);
    }
    std::sort(roots.begin(), roots.end(), [](const CongestionRoot& x, const CongestionRoot& y) {
      return std::tuple(-x.score, x.port) < std::tuple(-y.score, y.port);
    });
    if (roots.size() > config_.top_k) {
      f_.beyond_top_k.assign(roots.begin() + static_cast<std::ptrdiff_t>(config_.top_k),
                             roots.end());
      roots.resize(config_.top_k);
    }
    f_.roots = std::move(roots);
  }

  const Topology& topo_;
  const Fabric& fabric_;
  const std::vector<PortScore>& ports_;
  const std::vector<PortSample>& samples_;
  const CongestionConfig& config_;
  const RootMemory& memory_;
  const RouteEvidence* routes_;
  const std::size_t count_;
  const std::size_t nodes_;
  CongestionForest f_;
  std::vector<std::vector<std::size_t>> at_;
  std::vector<double> imbalance_;
  // Parent of victims on evidence alone (no threshold reached).
  std::vector<std::uint8_t> by_evidence_;
  std::vector<std::size_t> candidates_;  // gather_candidates()
  std::vector<std::uint8_t> on_rail_;
};

}  // namespace

CongestionForest build_congestion_forest(const Topology& topo, const Fabric& fabric,
                                         const std::vector<PortScore>& ports,
                                         const std::vector<PortSample>& samples,
                                         const CongestionConfig& config, const RootMemory& memory,
                                         const RouteEvidence* routes) {
  return ForestBuilder(topo, fabric, ports, samples, config, memory, routes).build();
}

}  // namespace ibfx
