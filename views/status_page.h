// The status page and /status.json as the publisher renders them, once per
// sweep: each body as text and as gzip (every browser asks for gzip), so
// that a request only copies bytes out of the publication.
#pragma once

#include <string>
#include <string_view>

#include "snapshot/snapshot.h"
#include "views/status_model.h"

namespace ibfx {

struct StatusBody {
  std::string identity;
  std::string gzip;  // one gzip member of `identity`
};

struct StatusBodies {
  StatusBody html;  // GET /
  StatusBody json;  // GET /status.json
};

// Renders both bodies of `model` and compresses them.
StatusBodies render_status_bodies(const StatusModel& model);

// The model of `snapshot` for the publisher, with the telemetry path the
// page links to and the snapshot's congestion events (StatusModel::events,
// issue #26); the Slurm jobs each root hurts (StatusRoot::jobs, issue #28)
// come from the snapshot's job join in build_status_model().
StatusModel daemon_status_model(const Snapshot& snapshot, std::string_view telemetry_path);

}  // namespace ibfx
