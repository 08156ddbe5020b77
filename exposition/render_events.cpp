#include "exposition/render_events.h"

#include <array>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup EventsRenderer::group() const { return RenderGroup::kAggregates; }

void EventsRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  std::array<std::uint64_t, kCauseCount> active{};
  for (const CongestionEvent& e : *s.events) {
    if (e.active()) ++active[static_cast<std::size_t>(e.cause)];
  }
  // Every cause always, zeros included: a counter that appears only with
  // its first event makes increase() miss that event.
  std::array<std::string, kCauseCount> labels;
  for (std::size_t c = 0; c < kCauseCount; ++c) {
    ExpositionWriter::add_label(labels[c], "cause", cause_name(static_cast<CongestionCause>(c)));
  }
  w.node(ExpositionIndex::kNoNode);
  w.family(families::kEventsTotal);
  for (std::size_t c = 0; c < kCauseCount; ++c) {
    w.sample(families::kEventsTotal.name, labels[c], s.event_counters.started[c]);
  }
  w.family(families::kEventSecondsTotal);
  for (std::size_t c = 0; c < kCauseCount; ++c) {
    w.sample(families::kEventSecondsTotal.name, labels[c], s.event_counters.seconds[c]);
  }
  w.family(families::kEventsActive);
  for (std::size_t c = 0; c < kCauseCount; ++c) {
    w.sample(families::kEventsActive.name, labels[c], active[c]);
  }
}

}  // namespace ibfx
