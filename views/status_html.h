// The fabric page (GET /): server-rendered HTML with the heatmap of pain as
// inline SVG (one cell per switch, coloured by its worst port's W, the
// value in text too, a tooltip and a link to the switch view) and the
// tables an operator reads at 2 AM: roots of congestion, hottest ports,
// degraded links, nodes not answering, congestion events, sweep health.
// Works without JavaScript; every untrusted name is escaped for its
// context (views/web_escape.h). Rendered once per sweep.
#pragma once

#include <string>

#include "views/status_model.h"

namespace ibfx {

std::string render_status_html(const StatusModel& model);

}  // namespace ibfx
