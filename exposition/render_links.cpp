#include "exposition/render_links.h"

#include <algorithm>
#include <string>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup LinksRenderer::group() const { return RenderGroup::kAggregates; }

void LinksRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const LinkHealthReport& links = *ctx.snapshot().links;
  const bool any_unhealthy = std::any_of(links.links.begin(), links.links.end(),
                                         [](const LinkReport& l) { return l.unhealthy(); });
  if (any_unhealthy) {
    w.family(families::kLinkUnhealthy);
    std::string labels;
    for (const LinkReport& l : links.links) {
      // A link that is only a length outlier is not unhealthy: no series
      // here, where alerts look; infiniband_link_length_outlier below says it.
      if (!l.unhealthy()) continue;
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
  const bool any_longer =
      std::any_of(links.links.begin(), links.links.end(),
                  [](const LinkReport& l) { return l.has(LinkCondition::kLengthOutlier); });
  if (any_longer) {
    w.family(families::kLinkLengthOutlier);
    std::string labels;
    for (const LinkReport& l : links.links) {
      if (!l.has(LinkCondition::kLengthOutlier)) continue;
      labels.clear();
      ExpositionWriter::add_label(labels, "node_guid", guid_hex(l.a.guid));
      ExpositionWriter::add_label(labels, "port", std::to_string(l.a.port));
      ExpositionWriter::add_label(labels, "remote_node_guid", guid_hex(l.b.guid));
      ExpositionWriter::add_label(labels, "remote_port", std::to_string(l.b.port));
      w.node(l.a.node == kNoNode ? ExpositionIndex::kNoNode : static_cast<std::uint32_t>(l.a.node));
      w.sample(families::kLinkLengthOutlier.name, labels, std::uint64_t{l.round_trip_ns});
    }
  }
  // Every condition that opens events always, zeros included: a counter
  // that appears only with its first event makes increase() miss that event.
  w.node(ExpositionIndex::kNoNode);
  w.family(families::kLinkEventsTotal);
  std::string labels;
  for (std::size_t c = 1; c < kLinkConditionCount; ++c) {
    if (!link_condition_alarms(static_cast<LinkCondition>(c))) continue;
    labels.clear();
    ExpositionWriter::add_label(labels, "condition",
                                link_condition_name(static_cast<LinkCondition>(c)));
    w.sample(families::kLinkEventsTotal.name, labels, links.events_total[c]);
  }
}

}  // namespace ibfx
