#include "links/link_peers.h"

#include <cstdio>
#include <map>
#include <tuple>

#include "analysis/scores.h"

namespace ibfx {

std::vector<SlowerLink> links_slower_than_they_should(const Fabric& f, const Topology* topology) {
  auto tier_of = [&](std::size_t n) {
    return topology && n < topology->tier.size() ? topology->tier[n] : Tier::kUnknown;
  };
  using Kind = std::tuple<NodeType, Tier, int, NodeType, Tier>;
  auto kind_of = [&](std::size_t n, const FabricPort& fp) {
    const auto r = static_cast<std::size_t>(fp.remote_node);
    const int rail = topology && n < topology->rail.size() ? topology->rail[n] : kNoRail;
    return Kind{f.nodes[n].type, tier_of(n), rail, f.nodes[r].type, tier_of(r)};
  };
  auto usable = [&](const FabricPort& fp) {
    return fp.up() && fp.linked() && static_cast<std::size_t>(fp.remote_node) < f.nodes.size() &&
           link_data_rate_bytes(fp) > 0;
  };
  auto far_port = [&](const FabricPort& fp) -> const FabricPort* {
    for (const FabricPort& p : f.nodes[static_cast<std::size_t>(fp.remote_node)].ports) {
      if (p.number == fp.remote_port) return &p;
    }
    return nullptr;
  };
  std::map<Kind, std::vector<double>> rates;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    for (const FabricPort& fp : f.nodes[n].ports) {
      if (usable(fp)) rates[kind_of(n, fp)].push_back(link_rate_gbps(fp));
    }
  }
  // The median as PromQL's quantile(0.5) has it: the mean of the two middle
  // values of an even count.
  std::map<Kind, double> median;
  for (auto& [kind, v] : rates) median[kind] = median_of(v);
  std::vector<SlowerLink> out;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const FabricNode& node = f.nodes[n];
    for (std::uint32_t i = 0; i < node.ports.size(); ++i) {
      const FabricPort& fp = node.ports[i];
      if (!usable(fp)) continue;
      SlowerLink s;
      s.node = static_cast<std::int32_t>(n);
      s.port_index = i;
      s.rate_gbps = link_rate_gbps(fp);
      s.peers_rate_gbps = median[kind_of(n, fp)];
      s.below_peers = s.rate_gbps < s.peers_rate_gbps;
      // Both ends must say what they enable: the far end of a cable whose
      // PortInfo was not read (or not in this fabric) judges nothing.
      if (const FabricPort* far = far_port(fp)) {
        s.enabled = link_enabled_best(fp, *far);
        const bool narrower =
            s.enabled.width_active != 0 &&
            link_width_lanes(fp.width_active) < link_width_lanes(s.enabled.width_active);
        const double best_lane = link_lane_gbps(s.enabled);
        const bool slower = best_lane > 0 && link_lane_gbps(fp) < best_lane;
        s.below_enabled = narrower || slower;
        if (s.below_enabled) {
          // The enabled rate at the width or speed that is known, the
          // port's own for the other.
          FabricPort at = fp;
          if (s.enabled.width_active != 0) at.width_active = s.enabled.width_active;
          if (best_lane > 0) {
            at.speed_active = s.enabled.speed_active;
            at.speed_ext_active = s.enabled.speed_ext_active;
          }
          s.enabled = at;
          s.enabled_rate_gbps = link_rate_gbps(at);
        }
      }
      if (s.below_peers || s.below_enabled) out.push_back(s);
    }
  }
  return out;
}

std::string degraded_reason(bool below_enabled, const std::string& enabled_width,
                            const std::string& enabled_speed, bool below_peers, double rate_gbps,
                            double peers_rate_gbps, const std::string& width,
                            const std::string& speed) {
  std::string out;
  if (below_enabled) {
    out = width + " " + speed + ", below the " + enabled_width + " " + enabled_speed +
          " both ends enable";
  }
  if (below_peers) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f Gb/s, below its peers' %.0f Gb/s", rate_gbps,
                  peers_rate_gbps);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out;
}

}  // namespace ibfx
