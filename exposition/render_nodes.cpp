#include "exposition/render_nodes.h"

#include <string>
#include <utility>
#include <vector>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup NodesRenderer::group() const { return RenderGroup::kAggregates; }

void NodesRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const NodeHealthReport& r = *ctx.snapshot().nodes;
  if (r.hosts.empty()) return;
  w.node(ExpositionIndex::kNoNode);
  std::vector<std::string> labels;
  labels.reserve(r.hosts.size());
  for (const HostHealth& h : r.hosts) {
    std::string l;
    ExpositionWriter::add_label(l, "host", h.host);
    labels.push_back(std::move(l));
  }
  w.family(families::kNodeRailsActive);
  for (std::size_t k = 0; k < r.hosts.size(); ++k) {
    w.sample(families::kNodeRailsActive.name, labels[k], std::uint64_t{r.hosts[k].rails_active});
  }
  w.family(families::kNodeRailsExpected);
  for (std::size_t k = 0; k < r.hosts.size(); ++k) {
    w.sample(families::kNodeRailsExpected.name, labels[k],
             std::uint64_t{r.hosts[k].rails_expected});
  }
  // The reason is a label: it changes when the fault does, which ends one
  // series and starts another, as an alert's annotation would.
  for (const auto& [family, verdict] :
       {std::pair{&families::kNodeUnhealthy, NodeVerdict::kUnhealthy},
        std::pair{&families::kNodeFabricIncident, NodeVerdict::kIncident}}) {
    w.family(*family);
    for (std::size_t k = 0; k < r.hosts.size(); ++k) {
      if (r.hosts[k].verdict != verdict) continue;
      w.sample(family->name, labels[k], "reason", r.hosts[k].reason, 1.0);
    }
  }
}

}  // namespace ibfx
