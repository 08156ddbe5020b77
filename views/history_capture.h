// Reduces one sweep's status model to a history frame (history/
// history_frame.h): the publisher builds the model for the page anyway, so
// the history costs a copy of a few kB a sweep, never a second pass over the
// ports. The roots, links and sweep are kept as the page's own rows
// (history/page_rows.h): the live rows' page part, sliced off, not converted.
#pragma once

#include <memory>

#include "history/history_frame.h"
#include "snapshot/snapshot.h"
#include "views/status_model.h"

namespace ibfx {

// `previous`: the table of the frame before (may be null); reused, not
// copied, while the switches are the same, which they are between
// discoveries. The jobs come from `snapshot`'s job join (none without a job
// source).
HistoryFramePtr make_history_frame(const StatusModel& model, const Snapshot& snapshot,
                                   const std::shared_ptr<const HistorySwitchTable>& previous);

}  // namespace ibfx
