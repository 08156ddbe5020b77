#include "routing/root_senders.h"

#include <algorithm>
#include <tuple>

namespace ibfx {

const std::vector<RouteEndpoint>& SenderCache::sources(const RouteModel& model, std::int32_t node,
                                                       std::uint8_t port) {
  auto [it, added] = sources_.try_emplace({node, port});
  if (added) it->second = model.sources_through(node, port);
  return it->second;
}

std::vector<RootSenders> senders_of_roots(const RouteModel& model, SenderCache& cache,
                                          const std::vector<PortScore>& ports,
                                          const std::vector<PortSample>& samples,
                                          const CongestionForest& forest) {
  std::vector<RootSenders> out;
  if (forest.roots.empty()) return out;
  const Fabric& f = model.fabric();
  // Where each HCA port's sample is: (node, port index) -> analysed index.
  std::map<std::pair<std::int32_t, std::uint32_t>, std::size_t> analysed;
  for (std::size_t k = 0; k < ports.size() && k < samples.size(); ++k) {
    const auto n = static_cast<std::size_t>(ports[k].node);
    if (ports[k].node >= 0 && n < f.nodes.size() && f.nodes[n].type == NodeType::kHca) {
      analysed[{ports[k].node, ports[k].port_index}] = k;
    }
  }
  for (std::size_t r = 0; r < forest.roots.size(); ++r) {
    const std::size_t k = forest.roots[r].port;
    if (k >= ports.size()) continue;
    const auto node = ports[k].node;
    if (node < 0 || static_cast<std::size_t>(node) >= f.nodes.size()) continue;
    const FabricNode& fn = f.nodes[static_cast<std::size_t>(node)];
    if (ports[k].port_index >= fn.ports.size()) continue;
    const std::uint8_t number = fn.ports[ports[k].port_index].number;
    RootSenders rs;
    rs.root = r;
    if (fn.type == NodeType::kSwitch) {
      if (!model.routed(node)) continue;  // no table: no claim about its senders
      const auto& counts = model.port_routes(node);
      if (ports[k].port_index < counts.size()) rs.routes = counts[ports[k].port_index].destinations;
    }
    const std::vector<RouteEndpoint>& sources = cache.sources(model, node, number);
    rs.sources = sources.size();
    std::vector<RootSender> ranked;
    ranked.reserve(sources.size());
    for (const RouteEndpoint& e : sources) {
      RootSender s{e, kNoPort, 0};
      const FabricNode& hca = f.nodes[static_cast<std::size_t>(e.node)];
      for (std::uint32_t i = 0; i < hca.ports.size(); ++i) {
        if (hca.ports[i].number != e.port) continue;
        auto it = analysed.find({e.node, i});
        if (it != analysed.end()) {
          s.port = it->second;
          const PortSample& sample = samples[it->second];
          if (sample.interval_seconds > 0) {
            // PortXmitData counts 4-byte words (IBA 16.1.3.5).
            s.bytes_per_second =
                static_cast<double>(sample.xmit_data_words) * 4.0 / sample.interval_seconds;
          }
        }
      }
      ranked.push_back(s);
    }
    const std::size_t keep = std::min(kTopSenders, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep),
                      ranked.end(), [&f](const RootSender& a, const RootSender& b) {
                        const auto ga = f.nodes[static_cast<std::size_t>(a.endpoint.node)].guid;
                        const auto gb = f.nodes[static_cast<std::size_t>(b.endpoint.node)].guid;
                        return std::tuple(-a.bytes_per_second, ga, a.endpoint.port) <
                               std::tuple(-b.bytes_per_second, gb, b.endpoint.port);
                      });
    ranked.resize(keep);
    rs.top = std::move(ranked);
    out.push_back(std::move(rs));
  }
  return out;
}

}  // namespace ibfx
