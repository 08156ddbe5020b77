// The coarse part of the history (issue #35): beyond the recent window the
// sweeps of each step (a minute by default) are folded into one frame that
// keeps the worst of them, because looking back an operator asks "how bad
// did it get, and where", which an average would hide.
#pragma once

#include <vector>

#include "history/history_frame.h"

namespace ibfx {

// The start of the step `time` falls in (steps are aligned to the epoch, so
// that a restart folds into the same columns).
double history_step_start(double time, double step);

// `frame`'s cells laid out as `table` (another frame's): by GUID, unknown
// for switches `frame` does not have.
std::vector<HistoryCell> history_cells_as(const HistoryFrame& frame,
                                          const HistorySwitchTable& table);

// `bucket` (a coarse frame of that step, or null) with `frame` folded in: per
// switch the cell with the largest W (with its U and port; a switch that
// was a root or silent in any sweep stays so), the roots by port with their
// highest score, the jobs by id with their worst stall, the sweep health of
// the worst sweep (fewest nodes answering, longest, any incomplete). The
// result has `frame`'s switch table: a discovery inside the step maps the
// bucket's cells by GUID and drops switches that are gone.
HistoryFramePtr fold_into_step(const HistoryFrame* bucket, const HistoryFrame& frame, double step);

}  // namespace ibfx
