// The one shape of a step of the publication (issue #42): the publisher
// (snapshot_publisher.h) renders the exposition, builds the status page's
// model from the snapshot, runs each publish stage on it in order, then
// renders the page from the model as they left it. A stage reads the
// snapshot and the model, adds to the model what the page shows of it
// and to the publication what it serves (the history recorder:
// history_recorder.h). Publisher thread only, one snapshot at a time.
#pragma once

#include <string_view>

#include "pipeline/publication.h"
#include "snapshot/snapshot.h"
#include "views/status_model.h"

namespace ibfx {

// What one publication carries down its stages.
struct PublishFrame {
  const Snapshot& snapshot;
  StatusModel& model;  // built; the page is rendered from it after the stages
  Publication& out;    // its snapshot and exposition set
};

class PublishStage {
 public:
  PublishStage() = default;
  virtual ~PublishStage() = default;
  PublishStage(const PublishStage&) = delete;
  PublishStage& operator=(const PublishStage&) = delete;

  // For logs and tests: what the stage is ("history", ...).
  virtual std::string_view name() const = 0;
  // Publisher thread: one publication's frame, read and added to.
  virtual void run(PublishFrame& frame) = 0;
  // After the publisher stopped (shutdown): saves what it keeps. Idempotent.
  virtual void stop() {}
};

}  // namespace ibfx
