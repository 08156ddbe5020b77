// Reduces one sweep's status model to a history frame (exposition/
// history_frame.h): the publisher builds the model for the page anyway, so
// the history costs a copy of a few kB a sweep, never a second pass over the
// ports.
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

// A root and a sweep's health as the history keeps them, and back (the
// page of then, /?at=): the one place their fields meet. /status.json
// writes its roots and sweep through history_root() and history_sweep()
// too, so that /history.json and the state file name them as it does.
HistoryRoot history_root(const StatusRoot& root);
StatusRoot status_root(const HistoryRoot& root);
HistorySweep history_sweep(const StatusSweep& sweep);
StatusSweep status_sweep(const HistorySweep& sweep, double timestamp_seconds);

}  // namespace ibfx
