#include "exposition/render_receipts.h"

#include <array>
#include <string>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup ReceiptsRenderer::group() const { return RenderGroup::kAggregates; }

void ReceiptsRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const ReceiptsView& receipts = ctx.snapshot().receipts;
  if (!receipts.enabled) return;
  // Every verdict always, zeros included: a counter that appears only with
  // its first receipt makes increase() miss that receipt.
  w.node(ExpositionIndex::kNoNode);
  w.family(families::kJobReceiptsTotal);
  for (std::size_t v = 0; v < kReceiptVerdictCount; ++v) {
    std::string label;
    ExpositionWriter::add_label(label, "verdict",
                                receipt_verdict_name(static_cast<ReceiptVerdict>(v)));
    w.sample(families::kJobReceiptsTotal.name, label, receipts.finished[v]);
  }
}

}  // namespace ibfx
