#include "links/link_length.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "analysis/scores.h"

namespace ibfx {

namespace {

struct Cable {
  std::size_t node = 0;
  std::uint32_t port_index = 0;
  double round_trip = 0;
};

struct Reference {
  double median = 0;
  double mad = 0;  // 1.4826-scaled
  std::size_t count = 0;
};

template <typename Key>
std::map<Key, Reference> references(const std::map<Key, std::vector<double>>& groups) {
  std::map<Key, Reference> out;
  for (const auto& [key, values] : groups) {
    if (values.size() < kLengthMinPeers + 1) continue;
    std::vector<double> v = values;
    Reference r;
    r.median = median_of(v);
    r.mad = scaled_mad(v, r.median);
    r.count = values.size();
    out.emplace(key, r);
  }
  return out;
}

}  // namespace

std::vector<LongerLink> links_longer_than_their_peers(const Fabric& f, const Topology* topology) {
  auto tier_of = [&](std::size_t n) {
    return topology && n < topology->tier.size() ? topology->tier[n] : Tier::kUnknown;
  };
  // Unordered pairs: a cable seen from either end is in the same group.
  using Pair = std::pair<std::uint64_t, std::uint64_t>;
  using Kind = std::tuple<NodeType, Tier, NodeType, Tier>;
  auto pair_of = [&](std::size_t a, std::size_t b) {
    return std::minmax(f.nodes[a].guid, f.nodes[b].guid);
  };
  auto kind_of = [&](std::size_t a, std::size_t b) {
    auto x = std::make_pair(f.nodes[a].type, tier_of(a));
    auto y = std::make_pair(f.nodes[b].type, tier_of(b));
    if (y < x) std::swap(x, y);
    return Kind{x.first, x.second, y.first, y.second};
  };
  std::vector<Cable> cables;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const FabricNode& node = f.nodes[n];
    for (std::uint32_t i = 0; i < node.ports.size(); ++i) {
      const FabricPort& p = node.ports[i];
      if (!p.up() || !p.linked() || static_cast<std::size_t>(p.remote_node) >= f.nodes.size()) {
        continue;
      }
      const auto r = static_cast<std::size_t>(p.remote_node);
      // Once per cable, from the end with the smaller (GUID, port).
      if (std::tie(f.nodes[r].guid, p.remote_port) < std::tie(node.guid, p.number)) continue;
      const FabricPort* far = nullptr;
      for (const FabricPort& q : f.nodes[r].ports) {
        if (q.number == p.remote_port) far = &q;
      }
      // Both ends measure the same link: their mean, or the one that says.
      double sum = 0;
      int known = 0;
      for (const FabricPort* e : {&p, far}) {
        if (e == nullptr || e->link_round_trip_ns == 0) continue;
        sum += e->link_round_trip_ns;
        ++known;
      }
      if (known == 0) continue;
      cables.push_back({n, i, sum / known});
    }
  }
  std::map<Pair, std::vector<double>> by_pair;
  std::map<Kind, std::vector<double>> by_kind;
  for (const Cable& c : cables) {
    const auto r = static_cast<std::size_t>(f.nodes[c.node].ports[c.port_index].remote_node);
    by_pair[pair_of(c.node, r)].push_back(c.round_trip);
    by_kind[kind_of(c.node, r)].push_back(c.round_trip);
  }
  const auto pair_refs = references(by_pair);
  const auto kind_refs = references(by_kind);
  std::vector<LongerLink> out;
  for (const Cable& c : cables) {
    const auto r = static_cast<std::size_t>(f.nodes[c.node].ports[c.port_index].remote_node);
    const Reference* ref = nullptr;
    bool parallel = false;
    if (auto it = pair_refs.find(pair_of(c.node, r)); it != pair_refs.end()) {
      ref = &it->second;
      parallel = true;
    } else if (auto k = kind_refs.find(kind_of(c.node, r)); k != kind_refs.end()) {
      ref = &k->second;
    }
    if (ref == nullptr) continue;
    if (c.round_trip <= ref->median + std::max(kLengthMads * ref->mad, kLengthFloorNs)) continue;
    LongerLink l;
    l.node = static_cast<std::int32_t>(c.node);
    l.port_index = c.port_index;
    l.round_trip_ns = static_cast<std::uint32_t>(std::lround(c.round_trip));
    l.peers_round_trip_ns = static_cast<std::uint32_t>(std::lround(ref->median));
    l.peers = static_cast<std::uint32_t>(ref->count);
    l.parallel = parallel;
    out.push_back(l);
  }
  return out;
}

}  // namespace ibfx
