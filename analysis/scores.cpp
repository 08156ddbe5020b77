#include "analysis/scores.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "config/yaml_reader.h"

namespace ibfx {
namespace {

bool known_speed(std::string_view name) {
  for (std::string_view s : {"SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR"}) {
    if (s == name) return true;
  }
  return false;
}

// 1.4826 x MAD estimates the standard deviation of a normal distribution.
constexpr double kMadScale = 1.4826;

int group_rail(const Topology& topo, std::size_t node) {
  const Tier t = topo.tier[node];
  if (t == Tier::kHca || t == Tier::kLeaf) return topo.rail[node];
  if (t == Tier::kUnknown) return kNoRail;
  return topo.single_rail[node];
}

// Robust z-scores of `values` against themselves.
std::vector<double> robust_scores(const std::vector<double>& values, double floor) {
  std::vector<double> work = values;
  const double med = median_of(work);
  const double spread = std::max(scaled_mad(work, med), floor);
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) out.push_back((v - med) / spread);
  return out;
}

std::uint32_t port_index_of(const FabricNode& node, std::uint8_t number) {
  for (std::size_t j = 0; j < node.ports.size(); ++j) {
    if (node.ports[j].number == number) return static_cast<std::uint32_t>(j);
  }
  return UINT32_MAX;
}

// Per node and port index (like Fabric), over the nodes the topology knows.
struct PortMatrix {
  std::vector<std::vector<double>> stall;
  std::vector<std::vector<double>> interval;
  // Index of the port at the other end of the link, UINT32_MAX if none; saves
  // a search per link in each worst-path pass.
  std::vector<std::vector<std::uint32_t>> remote_index;
};

// Best sums of W for the up-down path search: `arrive` climbs from a source
// HCA to the node, `depart` descends from the node to a destination HCA.
struct Step {
  double value = -1;             // < 0: no path
  std::int32_t other = kNoNode;  // arrive: previous node; depart: next node
  PathHop hop;  // arrive: the egress port on `other`; depart: the egress port on this node
};

WorstPath worst_path(const Topology& topo, const Fabric& fabric, const PortMatrix& m, int rail) {
  const auto& nodes = fabric.nodes;
  const std::size_t n = m.stall.size();
  std::vector<Step> arrive(n);
  std::vector<Step> depart(n);
  auto endpoint_ok = [&](std::size_t h) {
    return topo.tier[h] == Tier::kHca && (rail == kNoRail || topo.rail[h] == rail);
  };
  auto consider = [](Step& s, double value, std::int32_t other, PathHop hop) {
    if (value > s.value) s = Step{value, other, hop};
  };
  // Walk the tiers upwards for `arrive` and, in the same order, `depart`:
  // both only look at the tier below.
  for (Tier t : {Tier::kLeaf, Tier::kSpine, Tier::kCore}) {
    for (std::size_t i = 0; i < n; ++i) {
      if (topo.tier[i] != t) continue;
      for (std::size_t j = 0; j < m.stall[i].size(); ++j) {
        if (topo.direction[i][j] != PortDirection::kDown) continue;
        const FabricPort& p = nodes[i].ports[j];
        const auto r = static_cast<std::size_t>(p.remote_node);
        const std::uint32_t rj = m.remote_index[i][j];
        if (r >= n || rj >= m.stall[r].size()) continue;
        const double w_down = m.stall[i][j];
        const double w_up = m.stall[r][rj];
        const PathHop down_hop{static_cast<std::int32_t>(i), static_cast<std::uint32_t>(j), w_down};
        const PathHop up_hop{p.remote_node, rj, w_up};
        if (topo.tier[r] == Tier::kHca) {
          if (!endpoint_ok(r)) continue;
          consider(arrive[i], w_up, p.remote_node, up_hop);
          consider(depart[i], w_down, p.remote_node, down_hop);
        } else {
          if (arrive[r].value >= 0)
            consider(arrive[i], arrive[r].value + w_up, p.remote_node, up_hop);
          if (depart[r].value >= 0) {
            consider(depart[i], depart[r].value + w_down, p.remote_node, down_hop);
          }
        }
      }
    }
  }
  WorstPath best;
  best.rail = rail;
  std::int32_t turn = kNoNode;
  double best_value = -1;
  for (std::size_t i = 0; i < n; ++i) {
    if (arrive[i].value < 0 || depart[i].value < 0) continue;
    const double v = arrive[i].value + depart[i].value;
    if (v > best_value) {
      best_value = v;
      turn = static_cast<std::int32_t>(i);
    }
  }
  if (turn == kNoNode) return best;
  for (std::int32_t cur = turn; topo.tier[static_cast<std::size_t>(cur)] != Tier::kHca;) {
    const Step& s = arrive[static_cast<std::size_t>(cur)];
    best.hops.push_back(s.hop);
    cur = s.other;
  }
  std::reverse(best.hops.begin(), best.hops.end());
  for (std::int32_t cur = turn; topo.tier[static_cast<std::size_t>(cur)] != Tier::kHca;) {
    const Step& s = depart[static_cast<std::size_t>(cur)];
    best.hops.push_back(s.hop);
    cur = s.other;
  }
  for (const PathHop& h : best.hops) {
    best.stall_sum += h.stall;
    best.stalled_seconds += h.stall * m.interval[static_cast<std::size_t>(h.node)][h.port_index];
  }
  return best;
}

void add_to(Aggregate& a, const PortScore& p, const PortSample& s) {
  a.xmit_bytes += s.xmit_data_words * 4;
  a.errors += s.error_count;
  if (!p.valid) return;
  ++a.ports;
  a.mean_stall += p.stall;  // a sum until finish()
  a.max_stall = std::max(a.max_stall, p.stall);
}

void finish(Aggregate& a) {
  if (a.ports > 0) a.mean_stall /= static_cast<double>(a.ports);
}

// analyze's steps (docs/scores.md, sections 2 to 5), in the order analyze runs them.

// The number of nodes both the topology and the fabric describe: a topology
// from another discovery than `fabric` must not index past either.
std::size_t shared_node_count(const Topology& topo, const Fabric& fabric) {
  return std::min({fabric.nodes.size(), topo.tier.size(), topo.rail.size(), topo.single_rail.size(),
                   topo.direction.size()});
}

// An empty PortMatrix over the first `n` nodes, with each port's remote index.
PortMatrix index_ports(const Topology& topo, const Fabric& fabric, std::size_t n) {
  PortMatrix matrix;
  matrix.stall.resize(n);
  matrix.interval.resize(n);
  matrix.remote_index.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    // A topology from another discovery than `fabric` must not index past either.
    const std::size_t ports = std::min(fabric.nodes[i].ports.size(), topo.direction[i].size());
    matrix.stall[i].assign(ports, 0);
    matrix.interval[i].assign(ports, 0);
    for (std::size_t j = 0; j < ports; ++j) {
      const FabricPort& p = fabric.nodes[i].ports[j];
      const bool linked = p.remote_node >= 0 && static_cast<std::size_t>(p.remote_node) < n;
      matrix.remote_index[i].push_back(
          linked
              ? port_index_of(fabric.nodes[static_cast<std::size_t>(p.remote_node)], p.remote_port)
              : UINT32_MAX);
    }
  }
  return matrix;
}

// Stall ratio and utilisation per port, in input order; each valid W is also
// written into `matrix` for the worst-path search.
void score_ports(const Topology& topo, const Fabric& fabric, const std::vector<PortSample>& samples,
                 const ScoreConfig& config, PortMatrix& matrix, AnalysisResult& result) {
  const std::size_t n = matrix.stall.size();
  const XmitWaitModel wait_model(config.xmit_wait);
  result.ports.reserve(samples.size());
  for (const PortSample& s : samples) {
    PortScore p;
    p.node = s.node;
    p.port_index = s.port_index;
    const bool known = s.node >= 0 && static_cast<std::size_t>(s.node) < n &&
                       s.port_index < matrix.stall[static_cast<std::size_t>(s.node)].size();
    if (known) {
      const auto node = static_cast<std::size_t>(s.node);
      p.tier = topo.tier[node];
      p.rail = group_rail(topo, node);
      p.direction = topo.direction[node][s.port_index];
      const FabricNode& fnode = fabric.nodes[node];
      const FabricPort& fport = fnode.ports[s.port_index];
      const double tick = wait_model.resolve(fnode, fport, s.device_tick).seconds;
      const double rate = link_data_rate_bytes(fport);
      if (rate > 0 && s.interval_seconds > 0) {
        // Slightly above 1 is timing jitter between the two readings.
        p.utilization_valid = true;
        p.utilization =
            std::min(static_cast<double>(s.xmit_data_words) * 4 / s.interval_seconds / rate, 1.0);
      }
      if (s.has_xmit_wait && tick > 0 && s.interval_seconds > 0) {
        const double raw = static_cast<double>(s.xmit_wait_ticks) * tick / s.interval_seconds;
        p.valid = true;
        p.clamped = raw > 1.0;
        p.stall = std::min(raw, 1.0);
        matrix.stall[node][s.port_index] = p.stall;
        matrix.interval[node][s.port_index] = s.interval_seconds;
      }
    }
    if (!p.valid) ++result.skipped;
    if (p.clamped) ++result.clamped;
    result.ports.push_back(p);
  }
}

// Hotspot score against peers of the same tier, rail and direction; then the
// top_k valid ports by score.
void rank_hotspots(const ScoreConfig& config, AnalysisResult& result) {
  std::map<std::tuple<Tier, int, PortDirection>, std::vector<std::size_t>> groups;
  for (std::size_t k = 0; k < result.ports.size(); ++k) {
    const PortScore& p = result.ports[k];
    if (p.valid) groups[{p.tier, p.rail, p.direction}].push_back(k);
  }
  for (const auto& [key, members] : groups) {
    std::vector<double> w;
    w.reserve(members.size());
    for (std::size_t k : members) w.push_back(result.ports[k].stall);
    const std::vector<double> z = robust_scores(w, config.mad_floor);
    for (std::size_t m = 0; m < members.size(); ++m) {
      PortScore& p = result.ports[members[m]];
      p.score = z[m];
      p.peers = members.size();
      if (p.score > config.hot_threshold) ++result.hot_ports;
    }
  }
  for (std::size_t k = 0; k < result.ports.size(); ++k) {
    if (result.ports[k].valid) result.top_ports.push_back(k);
  }
  auto by_score = [&](std::size_t a, std::size_t b) {
    const PortScore& x = result.ports[a];
    const PortScore& y = result.ports[b];
    return std::tuple(-x.score, -x.stall, x.node, x.port_index) <
           std::tuple(-y.score, -y.stall, y.node, y.port_index);
  };
  std::sort(result.top_ports.begin(), result.top_ports.end(), by_score);
  if (result.top_ports.size() > config.top_k) result.top_ports.resize(config.top_k);
}

// Per switch: the mean W of its ports, scored among switches of its tier and
// rail; by score, descending.
std::vector<SwitchScore> score_switches(const Topology& topo, const std::vector<PortScore>& ports,
                                        const ScoreConfig& config) {
  std::map<std::int32_t, SwitchScore> switches;
  std::map<std::int32_t, std::size_t> switch_ports;
  for (const PortScore& p : ports) {
    if (!p.valid || p.tier == Tier::kHca) continue;
    SwitchScore& s = switches[p.node];
    if (switch_ports[p.node]++ == 0) {
      s.node = p.node;
      s.tier = p.tier;
      s.rail = group_rail(topo, static_cast<std::size_t>(p.node));
      s.max_port_score = p.score;
    }
    s.mean_stall += p.stall;
    s.max_port_score = std::max(s.max_port_score, p.score);
    if (p.score > config.hot_threshold) ++s.hot_ports;
  }
  std::map<std::pair<Tier, int>, std::vector<std::int32_t>> switch_groups;
  for (auto& [node, s] : switches) {
    s.mean_stall /= static_cast<double>(switch_ports[node]);
    switch_groups[{s.tier, s.rail}].push_back(node);
  }
  for (const auto& [key, members] : switch_groups) {
    std::vector<double> w;
    w.reserve(members.size());
    for (std::int32_t node : members) w.push_back(switches[node].mean_stall);
    const std::vector<double> z = robust_scores(w, config.mad_floor);
    for (std::size_t m = 0; m < members.size(); ++m) switches[members[m]].score = z[m];
  }
  std::vector<SwitchScore> out;
  out.reserve(switches.size());
  for (const auto& [node, s] : switches) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const SwitchScore& a, const SwitchScore& b) {
    return std::tuple(-a.score, -a.mean_stall, a.node) <
           std::tuple(-b.score, -b.mean_stall, b.node);
  });
  return out;
}

// Tails (p50, p99 and their ratio) per (tier, rail).
std::vector<TailScore> score_tails(const std::vector<PortScore>& ports, const ScoreConfig& config) {
  std::map<std::pair<Tier, int>, std::vector<double>> tail_groups;
  for (const PortScore& p : ports) {
    if (p.valid) tail_groups[{p.tier, p.rail}].push_back(p.stall);
  }
  std::vector<TailScore> out;
  for (auto& [key, w] : tail_groups) {
    TailScore t;
    t.tier = key.first;
    t.rail = key.second;
    t.ports = w.size();
    t.p50 = percentile_of(w, 0.50);
    t.p99 = percentile_of(w, 0.99);
    t.ratio = t.p99 / std::max(t.p50, config.tail_floor);
    out.push_back(t);
  }
  return out;
}

// Sums and maxima per rail, per switch and per tier over the first `n` nodes.
void aggregate(const Topology& topo, std::size_t n, const std::vector<PortSample>& samples,
               AnalysisResult& result) {
  std::map<int, Aggregate> rails;
  std::map<std::int32_t, Aggregate> by_switch;
  std::map<Tier, Aggregate> tiers;
  for (std::size_t k = 0; k < result.ports.size(); ++k) {
    const PortScore& p = result.ports[k];
    if (p.node < 0 || static_cast<std::size_t>(p.node) >= n) continue;
    const PortSample& s = samples[k];
    if (p.rail != kNoRail) {
      Aggregate& a = rails[p.rail];
      a.rail = p.rail;
      add_to(a, p, s);
    }
    if (p.tier != Tier::kHca) {
      Aggregate& a = by_switch[p.node];
      a.tier = p.tier;
      a.rail = group_rail(topo, static_cast<std::size_t>(p.node));
      a.node = p.node;
      add_to(a, p, s);
    }
    Aggregate& a = tiers[p.tier];
    a.tier = p.tier;
    add_to(a, p, s);
  }
  for (auto& [rail, a] : rails) {
    finish(a);
    result.by_rail.push_back(a);
  }
  for (auto& [node, a] : by_switch) {
    finish(a);
    result.by_switch.push_back(a);
  }
  for (auto& [tier, a] : tiers) {
    finish(a);
    result.by_tier.push_back(a);
  }
}

// Worst paths: the whole fabric, then each rail that has HCAs.
std::vector<WorstPath> worst_paths(const Topology& topo, const Fabric& fabric,
                                   const PortMatrix& matrix) {
  std::set<int> hca_rails;
  for (std::size_t i = 0; i < matrix.stall.size(); ++i) {
    if (topo.tier[i] == Tier::kHca && topo.rail[i] != kNoRail) hca_rails.insert(topo.rail[i]);
  }
  std::vector<WorstPath> out;
  out.push_back(worst_path(topo, fabric, matrix, kNoRail));
  for (int rail : hca_rails) out.push_back(worst_path(topo, fabric, matrix, rail));
  return out;
}

}  // namespace

double median_of(std::vector<double>& values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

double scaled_mad(std::vector<double>& values, double median) {
  if (values.empty()) return 0;
  for (double& v : values) v = std::abs(v - median);
  return kMadScale * median_of(values);
}

double percentile_of(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

PortSample make_port_sample(std::int32_t node, std::uint32_t port_index,
                            const std::array<std::uint64_t, kCounterCount>& before,
                            const std::array<std::uint64_t, kCounterCount>& after,
                            double interval_seconds) {
  auto delta = [&](Counter c) {
    const auto i = static_cast<std::size_t>(c);
    return after[i] >= before[i] ? after[i] - before[i] : 0;
  };
  PortSample s;
  s.node = node;
  s.port_index = port_index;
  s.xmit_wait_ticks = delta(Counter::kTransmitWait);
  s.xmit_data_words = delta(Counter::kTransmitDataBytes);
  for (auto c = static_cast<std::size_t>(Counter::kSymbolErrors);
       c <= static_cast<std::size_t>(Counter::kExcessiveBufferOverrunErrors); ++c) {
    s.error_count += delta(static_cast<Counter>(c));
  }
  s.interval_seconds = interval_seconds;
  return s;
}

AnalysisResult analyze(const Topology& topo, const Fabric& fabric,
                       const std::vector<PortSample>& samples, const ScoreConfig& config,
                       const RootMemory& memory, const RouteEvidence* routes) {
  AnalysisResult result;
  const std::size_t n = shared_node_count(topo, fabric);
  PortMatrix matrix = index_ports(topo, fabric, n);
  score_ports(topo, fabric, samples, config, matrix, result);
  rank_hotspots(config, result);
  result.switches = score_switches(topo, result.ports, config);
  result.tails = score_tails(result.ports, config);
  aggregate(topo, n, samples, result);
  result.worst_paths = worst_paths(topo, fabric, matrix);
  result.congestion = build_congestion_forest(topo, fabric, result.ports, samples,
                                              config.congestion, memory, routes);
  return result;
}

ScoreConfig parse_score_config(const YAML::Node& node, const std::string& source) {
  ScoreConfig config;
  if (!node.IsDefined() || node.IsNull()) return config;
  const yaml::SectionReader reader(node, source, "scores");
  reader.for_each_entry(node, [&](const std::string& key, int line, const YAML::Node& value) {
    const int value_line = reader.line_of(value, line);
    if (key == "tick_multiplier") {
      config.xmit_wait.multiplier =
          static_cast<double>(reader.integer(value, value_line, key, 1, 256));
    } else if (key == "tick_seconds") {
      config.xmit_wait.global_seconds = reader.number(value, value_line, key, 1e-12, 1e-3);
    } else if (key == "tick_seconds_by_speed") {
      reader.require_map(value, line, key);
      if (value.IsNull()) return;
      for (const auto& item : value) {
        const int item_line = reader.line_of(item.first, line);
        const std::string speed = reader.key(item.first);
        if (!known_speed(speed)) {
          reader.fail(item_line, key,
                      "unknown link speed \"" + speed +
                          "\" (expected SDR, DDR, QDR, FDR, EDR, "
                          "HDR, NDR or XDR)");
        }
        config.xmit_wait.per_speed_seconds[speed] =
            reader.number(item.second, reader.line_of(item.second, item_line), key, 1e-12, 1e-3);
      }
    } else if (key == "xmit_wait_by_device_id" || key == "xmit_wait_by_guid") {
      reader.require_map(value, line, key);
      if (value.IsNull()) return;
      for (const auto& item : value) {
        const int item_line = reader.line_of(item.first, line);
        const std::string id = reader.key(item.first);
        const std::uint64_t number = reader.guid(id, item_line, key);
        const XmitWaitOverride o = parse_xmit_wait_override(
            reader, item.second, reader.line_of(item.second, item_line), key);
        if (key == "xmit_wait_by_guid") {
          config.xmit_wait.by_guid[number] = o;
        } else {
          if (number > 0xffff) reader.fail(item_line, key, "device ID " + id + " above 0xffff");
          config.xmit_wait.by_device_id[static_cast<std::uint32_t>(number)] = o;
        }
      }
    } else if (key == "stall_threshold") {
      config.congestion.stall_threshold = reader.number(value, value_line, key, 1e-4, 1.0);
    } else if (key == "saturation_threshold") {
      config.congestion.saturation_threshold = reader.number(value, value_line, key, 0.01, 1.0);
    } else if (key == "imbalance_threshold") {
      config.congestion.imbalance_threshold = reader.number(value, value_line, key, 1.0, 1e6);
    } else if (key == "evidence_floor") {
      config.congestion.evidence_floor = reader.number(value, value_line, key, 0.01, 1.0);
    } else if (key == "evidence_margin") {
      config.congestion.evidence_margin = reader.number(value, value_line, key, 1.0, 100.0);
    } else if (key == "hold_fraction") {
      config.congestion.hold_fraction = reader.number(value, value_line, key, 0.1, 1.0);
    } else if (key == "root_top_k") {
      config.congestion.top_k =
          static_cast<std::size_t>(reader.integer(value, value_line, key, 0, 100000));
    } else if (key == "mad_floor") {
      config.mad_floor = reader.number(value, value_line, key, 1e-6, 1.0);
    } else if (key == "hot_threshold") {
      config.hot_threshold = reader.number(value, value_line, key, 0.0, 1e6);
    } else if (key == "top_k") {
      config.top_k = static_cast<std::size_t>(reader.integer(value, value_line, key, 0, 100000));
    } else if (key == "tail_floor") {
      config.tail_floor = reader.number(value, value_line, key, 1e-6, 1.0);
    } else {
      reader.fail(line, key, "unknown key");
    }
  });
  return config;
}

}  // namespace ibfx
