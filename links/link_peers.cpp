#include "links/link_peers.h"

#include <map>
#include <tuple>

#include "analysis/scores.h"

namespace ibfx {

std::vector<SlowerLink> links_slower_than_peers(const Fabric& f, const Topology* topology) {
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
      const double peers = median[kind_of(n, fp)];
      const double rate = link_rate_gbps(fp);
      if (rate < peers) out.push_back({static_cast<std::int32_t>(n), i, rate, peers});
    }
  }
  return out;
}

}  // namespace ibfx
