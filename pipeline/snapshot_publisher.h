// The last stage of the pipeline: renders (and compresses) built snapshots
// and publishes them to the SnapshotStore, on its own thread, so that the
// render of sweep N overlaps sweep N+1 instead of delaying it (issue #19).
// When it falls behind, the snapshot waiting to be rendered is replaced by
// the newer one (the older is dropped, counted): a scrape serves the latest
// fully rendered snapshot and never renders itself.
//
// Rendering is a step it calls, not code it holds: whatever renderer the
// snapshot uses (Snapshot::compress() today) plugs in as `Render`.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exposition/deflate_block_cache.h"
#include "pipeline/publication.h"
#include "pipeline/publish_stage.h"
#include "snapshot/snapshot.h"

namespace ibfx {

struct PublisherStats {
  std::uint64_t published = 0;
  std::uint64_t dropped = 0;       // replaced by a newer one before it was rendered
  double last_render_seconds = 0;  // render + compress of the last published one
  // Text bytes of the last published one whose deflated blocks came from
  // the deflate cache (unchanged since the snapshot before), and deflated
  // anew (RenderedExposition::stats()).
  std::uint64_t last_reused_bytes = 0;
  std::uint64_t last_deflated_bytes = 0;
  std::uint64_t last_sequence = 0;  // the submit() number of the last published one
};

class SnapshotPublisher {
 public:
  // Makes the snapshot servable: fills `out` (whose snapshot is set) with
  // what is rendered from it; runs on the publisher thread, or in submit()
  // when no thread runs. `cache` is the publisher's, for this step only.
  using Render = std::function<void(const Snapshot&, DeflateBlockCache& cache, Publication& out)>;
  // Told after each publication (on the thread that published).
  using Published = std::function<void(const Publication&, const PublisherStats&)>;
  // The daemon's render step: the exposition of every group, compressed,
  // and the status page and /status.json (linking to /metrics).
  static void render_exposition(const Snapshot& snapshot, DeflateBlockCache& cache,
                                Publication& out);
  // The same, with the status page linking to `telemetry_path`, and
  // `stages` run in order on its model before the page is rendered from it
  // (publish_stage.h; not owned, they outlive the publisher).
  static Render render_exposition_for(std::string telemetry_path,
                                      std::vector<PublishStage*> stages = {});

  // `nice`: added to the publisher thread's nice value (Linux: per thread;
  // the deflate threads the render starts inherit it), so that on a machine
  // with few cores the sweep thread and the MAD worker, whose timing is the
  // fabric's, come first and the render takes what is left.
  SnapshotPublisher(PublicationStore& store, Render render = render_exposition,
                    Published published = {}, int nice = 0);
  ~SnapshotPublisher();
  SnapshotPublisher(const SnapshotPublisher&) = delete;
  SnapshotPublisher& operator=(const SnapshotPublisher&) = delete;

  // Background mode. Without it, submit() renders and publishes before it
  // returns (--once, tests, benchmarks).
  void start();
  // Publishes what is pending, then stops the thread.
  void stop();

  // Hands over a built snapshot; returns its sequence number. In background
  // mode it returns at once: a snapshot still waiting is dropped for it.
  std::uint64_t submit(std::shared_ptr<const Snapshot> snapshot);
  // Waits until every snapshot submitted so far is published or dropped.
  void flush();

  PublisherStats stats() const;

 private:
  void loop();
  void publish(const std::shared_ptr<const Snapshot>& snapshot, std::uint64_t sequence);

  PublicationStore& store_;
  Render render_;
  // The deflated blocks of the last publication, for the next one: used
  // only by the render step, one snapshot at a time, so it needs no lock.
  DeflateBlockCache cache_;
  Published published_;
  int nice_ = 0;
  mutable std::mutex mu_;
  std::condition_variable wake_;  // a snapshot pending, or stopping
  std::condition_variable idle_;  // nothing pending or rendering (flush)
  std::shared_ptr<const Snapshot> pending_;
  std::uint64_t pending_sequence_ = 0;
  std::uint64_t submitted_ = 0;
  std::uint64_t done_ = 0;  // sequence published or dropped up to
  bool busy_ = false;
  bool stopping_ = false;
  PublisherStats stats_;
  std::thread thread_;
};

}  // namespace ibfx
