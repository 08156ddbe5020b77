// GET /history.json (issue #35, docs/history.schema.json): the status
// page's history for scripts. Per frame each switch's worst W, its U and
// port, the worst W per tier and per rail, the roots, the jobs' worst stall
// ratios, the unhealthy links and the sweep health; the switches are listed once, the newest
// fabric's, and every frame's cells laid out as them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "history/history_frame.h"

namespace ibfx {

// One root as /history.json shows it, and the state file keeps it: the
// names of /status.json's roots; "jobs" null when no job source was on.
nlohmann::json history_root_json(const PageRoot& root);

// One unhealthy link as /history.json shows it and the state file keeps
// it: the names of /status.json's links (BERs null when none).
nlohmann::json history_link_json(const PageLink& link);

// One frame's sweep health, the same in /history.json and the state file.
nlohmann::json history_sweep_json(const PageSweep& sweep);

// At most this many frames in one answer: a longer range is answered at a
// coarser step (the answer's step_seconds says which).
inline constexpr std::size_t kHistoryJsonMaxFrames = 1500;

// The frames congested in [from, to] (a frame counts from its time to the
// end of its span). `step` 0: as kept (each sweep in the recent window,
// each coarse step beyond); else folded to that step, the worst of each.
std::string render_history_json(const HistoryFrames& history, double from, double to, double step);

}  // namespace ibfx
