#include "pipeline/snapshot_publisher.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <utility>

#include "base/thread_name.h"

namespace ibfx {

SnapshotPublisher::SnapshotPublisher(PublicationStore& store, Render render, Published published,
                                     int nice)
    : store_(store), render_(std::move(render)), published_(std::move(published)), nice_(nice) {}

SnapshotPublisher::~SnapshotPublisher() { stop(); }

void SnapshotPublisher::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    set_thread_name("ibfx-publish");
    loop();
  });
}

void SnapshotPublisher::stop() {
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t SnapshotPublisher::submit(std::shared_ptr<const Snapshot> snapshot) {
  std::unique_lock lock(mu_);
  const std::uint64_t sequence = ++submitted_;
  if (!thread_.joinable()) {
    lock.unlock();
    publish(snapshot, sequence);
    return sequence;
  }
  if (pending_) {
    // Behind: the older one would only be replaced as soon as it was
    // served. Its sweep's counters are in the newer one anyway (totals).
    ++stats_.dropped;
  }
  pending_ = std::move(snapshot);
  pending_sequence_ = sequence;
  lock.unlock();
  wake_.notify_one();
  return sequence;
}

void SnapshotPublisher::flush() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = submitted_;
  idle_.wait(lock, [&] { return done_ >= target || !thread_.joinable(); });
}

PublisherStats SnapshotPublisher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void SnapshotPublisher::loop() {
  if (nice_ != 0) {
    // setpriority(2) on a thread id sets that thread's nice value only. A
    // failure (e.g. no permission to lower it) leaves the default: the
    // render still runs, just with the same weight as the sweep.
    const auto tid = static_cast<id_t>(gettid());
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0) setpriority(PRIO_PROCESS, tid, std::clamp(now + nice_, -20, 19));
  }
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return pending_ != nullptr || stopping_; });
    if (!pending_) return;  // stopping, nothing left
    std::shared_ptr<const Snapshot> next = std::move(pending_);
    pending_.reset();
    const std::uint64_t sequence = pending_sequence_;
    busy_ = true;
    lock.unlock();
    publish(next, sequence);
    lock.lock();
    busy_ = false;
    idle_.notify_all();
  }
}

void SnapshotPublisher::render_exposition(const Snapshot& snapshot, DeflateBlockCache& cache,
                                          Publication& out) {
  render_exposition_for("/metrics")(snapshot, cache, out);
}

SnapshotPublisher::Render SnapshotPublisher::render_exposition_for(
    std::string telemetry_path, std::vector<PublishStage*> stages) {
  return [path = std::move(telemetry_path), stages = std::move(stages)](
             const Snapshot& snapshot, DeflateBlockCache& cache, Publication& out) {
    out.exposition = RenderedExposition::build(snapshot, &cache);
    StatusModel model = daemon_status_model(snapshot, path);
    PublishFrame frame{snapshot, model, out};
    for (PublishStage* stage : stages) stage->run(frame);
    out.status = render_status_bodies(model);
  };
}

void SnapshotPublisher::publish(const std::shared_ptr<const Snapshot>& snapshot,
                                std::uint64_t sequence) {
  const auto t = std::chrono::steady_clock::now();
  auto publication = std::make_shared<Publication>();
  publication->snapshot = snapshot;
  publication->sequence = sequence;
  if (render_) render_(*snapshot, cache_, *publication);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  const RenderedExposition::Stats compressed = publication->exposition.stats();
  store_.publish(publication);
  PublisherStats now;
  {
    std::lock_guard lock(mu_);
    ++stats_.published;
    stats_.last_render_seconds = seconds;
    stats_.last_reused_bytes = compressed.reused_bytes;
    stats_.last_deflated_bytes = compressed.deflated_bytes;
    stats_.last_sequence = sequence;
    now = stats_;
  }
  if (published_) published_(*publication, now);
  {
    std::lock_guard lock(mu_);
    done_ = sequence;  // a dropped one before it is done as well
  }
  idle_.notify_all();
}

}  // namespace ibfx
