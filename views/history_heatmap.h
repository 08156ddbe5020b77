// The status page's heatmap of pain over time (issue #35): rows of
// switches (one per switch on a small fabric; on a large one each rail's
// leaves, the spines, the cores, with the worst switch named in the
// tooltip), columns of time (the last hour by default, ?window=6h, 24h),
// coloured by the worst W as today's heatmap is. Each column links to the
// page as it was then (/?at=). Drawn from the history the model carries;
// about 60 columns whatever the window, so that the page stays small at
// 98k ports.
#pragma once

#include <string>

#include "views/status_model.h"

namespace ibfx {

// Columns of the heatmap over time: the window divided into this many steps.
inline constexpr int kHistoryColumns = 60;
// Up to this many switches, a row per switch; beyond, a row per StatusRow.
inline constexpr std::size_t kHistorySwitchRows = 40;

// "Heatmap of pain over time" with its window links, or a line saying
// there is no history yet.
void append_history_heatmap(std::string& out, const StatusModel& m);
// On a page "as it was" (m.as_of): the banner saying so, with a link back
// to now. Nothing otherwise.
void append_as_of_banner(std::string& out, const StatusModel& m);
// The style the two add to the page.
std::string history_heatmap_style();

}  // namespace ibfx
