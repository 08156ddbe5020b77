// SnapshotPublisher: renders off the sweep thread, drops what it cannot keep
// up with, publishes only rendered snapshots.
#include "pipeline/snapshot_publisher.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/thread_name.h"

using namespace ibfx;

namespace {
// A snapshot told apart by its sweep_timestamp_seconds.
std::shared_ptr<const Snapshot> numbered(double n) {
  auto s = std::make_shared<Snapshot>();
  s->sweep_timestamp_seconds = n;
  return s;
}

// A render step that waits until released, recording what it rendered.
struct GatedRender {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  std::vector<double> rendered;
  void operator()(const Snapshot& s) {
    std::unique_lock lock(mu);
    ++entered;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
    rendered.push_back(s.sweep_timestamp_seconds);
  }
  void wait_entered(int n) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return entered >= n; });
  }
  void release() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
};
}  // namespace

TEST_CASE("SnapshotPublisher without its thread renders and publishes before submit returns",
          "[snapshot_publisher]") {
  PublicationStore store;
  std::vector<double> rendered, told;
  SnapshotPublisher publisher(
      store,
      [&](const Snapshot& s, DeflateBlockCache&, Publication&) {
        rendered.push_back(s.sweep_timestamp_seconds);
      },
      [&](const Publication& p, const PublisherStats& st) {
        told.push_back(p.snapshot->sweep_timestamp_seconds);
        CHECK(st.published == told.size());
      });
  CHECK(publisher.submit(numbered(1)) == 1);
  REQUIRE(store.current() != nullptr);
  CHECK(store.current()->snapshot->sweep_timestamp_seconds == 1);
  CHECK(publisher.submit(numbered(2)) == 2);
  CHECK(store.current()->snapshot->sweep_timestamp_seconds == 2);
  CHECK(rendered == std::vector<double>{1, 2});
  CHECK(told == std::vector<double>{1, 2});
  CHECK(publisher.stats().dropped == 0);
}

TEST_CASE("SnapshotPublisher renders on its thread, drops what waits behind, serves the latest",
          "[snapshot_publisher]") {
  PublicationStore store;
  GatedRender gate;
  std::set<double> published_when_told;
  std::mutex told_mu;
  SnapshotPublisher publisher(
      store, [&](const Snapshot& s, DeflateBlockCache&, Publication&) { gate(s); },
      [&](const Publication& p, const PublisherStats&) {
        const Snapshot& s = *p.snapshot;
        std::lock_guard lock(told_mu);
        // Told only once it is what the store serves.
        CHECK(store.current()->snapshot->sweep_timestamp_seconds == s.sweep_timestamp_seconds);
        published_when_told.insert(s.sweep_timestamp_seconds);
      });
  publisher.start();
  publisher.submit(numbered(1));
  gate.wait_entered(1);
  // The render of 1 is held: submit does not wait for it, and nothing
  // unrendered is served meanwhile.
  publisher.submit(numbered(2));
  publisher.submit(numbered(3));
  publisher.submit(numbered(4));
  CHECK(store.current() == nullptr);
  gate.release();
  publisher.flush();
  REQUIRE(store.current() != nullptr);
  CHECK(store.current()->snapshot->sweep_timestamp_seconds == 4);
  CHECK(gate.rendered == std::vector<double>{1, 4});  // 2 and 3 dropped, never rendered
  const PublisherStats st = publisher.stats();
  CHECK(st.published == 2);
  CHECK(st.dropped == 2);
  CHECK(st.last_sequence == 4);
  CHECK(published_when_told == std::set<double>{1, 4});
  publisher.stop();
}

TEST_CASE("SnapshotPublisher publishes what is pending when it stops", "[snapshot_publisher]") {
  PublicationStore store;
  GatedRender gate;
  SnapshotPublisher publisher(
      store, [&](const Snapshot& s, DeflateBlockCache&, Publication&) { gate(s); });
  publisher.start();
  publisher.submit(numbered(1));
  gate.wait_entered(1);
  publisher.submit(numbered(2));
  gate.release();
  publisher.stop();
  REQUIRE(store.current() != nullptr);
  CHECK(store.current()->snapshot->sweep_timestamp_seconds == 2);
  CHECK(gate.rendered == std::vector<double>{1, 2});
}

TEST_CASE("SnapshotPublisher renders at a lower priority than the thread that sweeps",
          "[snapshot_publisher]") {
  PublicationStore store;
  const int mine = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  std::atomic<int> render_nice{-100};
  SnapshotPublisher publisher(
      store,
      [&](const Snapshot&, DeflateBlockCache&, Publication&) {
        render_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
      },
      {}, 10);
  publisher.start();
  publisher.submit(numbered(1));
  publisher.flush();
  publisher.stop();
  CHECK(render_nice == std::min(mine + 10, 19));
  CHECK(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) == mine);  // only its own thread
}

TEST_CASE("SnapshotPublisher renders on a thread named ibfx-publish", "[snapshot_publisher]") {
  // `top -H` and the cadence benchmark tell the render's CPU from the sweep's by it.
  PublicationStore store;
  std::string name;
  SnapshotPublisher publisher(
      store, [&](const Snapshot&, DeflateBlockCache&, Publication&) { name = thread_name(); });
  publisher.start();
  publisher.submit(numbered(1));
  publisher.flush();
  publisher.stop();
  CHECK(name == "ibfx-publish");
}

TEST_CASE("SnapshotPublisher's own render step publishes the exposition with its deflate cache",
          "[snapshot_publisher]") {
  // The default step: RenderedExposition::build with the publisher's cache,
  // so the second of two equal snapshots is all reused.
  PublicationStore store;
  SnapshotPublisher publisher(store);
  const auto snap = numbered(7);
  publisher.submit(snap);
  const auto first = store.current();
  REQUIRE(first != nullptr);
  CHECK(first->snapshot == snap);
  CHECK(first->sequence == 1);
  CHECK(first->exposition.text_size() > 0);
  CHECK(publisher.stats().last_reused_bytes == 0);
  publisher.submit(snap);
  const auto second = store.current();
  CHECK(second != first);
  CHECK(second->sequence == 2);
  CHECK(publisher.stats().last_deflated_bytes == 0);
  CHECK(publisher.stats().last_reused_bytes == second->exposition.text_size());
}

namespace {
// A publish stage that notes its turn and leaves a mark on the page's model.
struct MarkingStage final : PublishStage {
  MarkingStage(std::string name, std::vector<std::string>& order)
      : name_(std::move(name)), order_(order) {}
  std::string_view name() const override { return name_; }
  void run(PublishFrame& frame) override {
    order_.push_back(name_);
    CHECK(frame.out.exposition.text_size() > 0);  // the exposition comes first
    CHECK(frame.model.sweep.timestamp_seconds == frame.snapshot.sweep_timestamp_seconds);
    frame.model.telemetry_path += "#" + name_;
  }
  std::string name_;
  std::vector<std::string>& order_;
};
}  // namespace

TEST_CASE(
    "SnapshotPublisher runs its publish stages in order on the model the page is rendered from",
    "[snapshot_publisher]") {
  PublicationStore store;
  std::vector<std::string> order;
  MarkingStage first("first", order);
  MarkingStage second("second", order);
  SnapshotPublisher publisher(
      store, SnapshotPublisher::render_exposition_for("/metrics", {&first, &second}));
  publisher.submit(numbered(7));
  CHECK(order == std::vector<std::string>{"first", "second"});
  const auto pub = store.current();
  REQUIRE(pub != nullptr);
  // The page links to the telemetry path as the stages left it.
  CHECK(pub->status.html.identity.find("/metrics#first#second") != std::string::npos);
}
