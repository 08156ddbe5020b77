#include "exposition/render_links.h"

#include <string>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup LinksRenderer::group() const { return RenderGroup::kAggregates; }

void LinksRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const LinkHealthReport& links = *ctx.snapshot().links;
  if (!links.links.empty()) {
    w.family(families::kLinkUnhealthy);
    std::string labels;
    for (const LinkReport& l : links.links) {
      // node_* is the end whose receiver sees a one-direction condition.
      const bool b_first = l.b_receives_worse();
      const LinkEnd& near = b_first ? l.b : l.a;
      const LinkEnd& far = b_first ? l.a : l.b;
      labels.clear();
      ExpositionWriter::add_label(labels, "node_guid", guid_hex(near.guid));
      ExpositionWriter::add_label(labels, "port", std::to_string(near.port));
      ExpositionWriter::add_label(labels, "remote_node_guid", guid_hex(far.guid));
      ExpositionWriter::add_label(labels, "remote_port", std::to_string(far.port));
      ExpositionWriter::add_label(labels, "condition", link_condition_name(l.condition));
      w.node(near.node == kNoNode ? ExpositionIndex::kNoNode
                                  : static_cast<std::uint32_t>(near.node));
      w.sample(families::kLinkUnhealthy.name, labels, std::uint64_t{1});
    }
  }
  // Every condition always, zeros included: a counter that appears only with
  // its first event makes increase() miss that event.
  w.node(ExpositionIndex::kNoNode);
  w.family(families::kLinkEventsTotal);
  std::string labels;
  for (std::size_t c = 1; c < kLinkConditionCount; ++c) {
    labels.clear();
    ExpositionWriter::add_label(labels, "condition",
                                link_condition_name(static_cast<LinkCondition>(c)));
    w.sample(families::kLinkEventsTotal.name, labels, links.events_total[c]);
  }
}

}  // namespace ibfx
