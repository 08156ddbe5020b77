// The status page as it was at a past sweep (/?at=, /status.json?at=,
// issue #35), rebuilt from the history frame of that time: its sweep
// health, every switch's worst port, its roots, the hottest switches (the
// history keeps switches, not every port), the switches that did not
// answer, and the congestion events that were active then. Marked with
// StatusModel::as_of, so that no one takes it for the live page.
#pragma once

#include "analysis/congestion_events.h"
#include "history/history_frame.h"
#include "views/status_model.h"

namespace ibfx {

// `events`: the daemon's current event list (null: not tracked); those
// congested at the frame's time are shown. `requested`: the time asked for.
StatusModel history_status_model(const HistoryFrame& frame, double requested,
                                 const EventList* events);

}  // namespace ibfx
