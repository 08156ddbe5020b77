// What the daemon serves, one sweep at a time: the snapshot and what the
// publisher rendered from it, published together with one pointer swap so
// that every endpoint of a scrape sees the same sweep.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "exposition/rendered_exposition.h"
#include "history/history_frame.h"
#include "snapshot/snapshot.h"
#include "views/status_page.h"

namespace ibfx {

struct Publication {
  std::shared_ptr<const Snapshot> snapshot;  // never null once published
  RenderedExposition exposition;             // /metrics
  std::uint64_t sequence = 0;                // SnapshotPublisher::submit()'s number
  StatusBodies status;                       // GET / and /status.json (views/status_page.h)
  // The status page's history as of this sweep (pipeline/history_recorder.h);
  // null when the daemon keeps none (tests, benchmarks).
  std::shared_ptr<const HistoryFrames> history;
  // The model the page was rendered from, for the pages rendered per
  // request from it (?window=); null when the daemon keeps no history.
  std::shared_ptr<const StatusModel> status_model;
};

// Holds the latest publication; readers get a shared_ptr that stays valid
// however long the scrape takes.
class PublicationStore {
 public:
  void publish(std::shared_ptr<const Publication> p) {
    std::lock_guard lock(mu_);
    current_ = std::move(p);
  }
  std::shared_ptr<const Publication> current() const {
    std::lock_guard lock(mu_);
    return current_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Publication> current_;
};

}  // namespace ibfx
