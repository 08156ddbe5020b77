// GET /status.json: the status page's content as JSON (docs/status.schema.json),
// from the same model and so the same snapshot as the page and /metrics
// (sweep.timestamp_seconds is the snapshot's sweep time). Rendered once per
// sweep.
#pragma once

#include <string>

#include "views/status_model.h"

namespace ibfx {

std::string render_status_json(const StatusModel& model);

}  // namespace ibfx
