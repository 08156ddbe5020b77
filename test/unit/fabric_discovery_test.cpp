// FabricDiscovery: discoveries merged into the known fabric, what it tells
// through its events, forgotten nodes handed to the sweep side, the
// discovery thread woken by the sweep's requests, the MAD worker's
// generation, and stop.
#include "discovery/fabric_discovery.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/support/fake_fabric.h"
#include "test/support/wait_for.h"

using namespace ibfx;
using ibfx::test::wait_for;

namespace {

// Discovers whatever `next` holds (null: fails), counting the calls.
struct FakeDiscover {
  std::mutex mu;
  std::shared_ptr<const Fabric> next;
  std::atomic<int> calls{0};

  void set(const Fabric& f) {
    std::lock_guard lock(mu);
    next = std::make_shared<Fabric>(f);
  }
  DiscoverFn fn() {
    return [this] {
      ++calls;
      std::lock_guard lock(mu);
      return next ? DiscoveryResult{next, ""} : DiscoveryResult{nullptr, "no port"};
    };
  }
};

// What the events said, in order.
struct Recorded {
  std::mutex mu;
  std::vector<DiscoveryReason> started;
  int failed = 0;
  std::vector<std::size_t> merged_missing;  // MergeOutcome::missing of each
  std::vector<bool> partial;
  std::vector<std::string> summaries;

  DiscoveryEvents events() {
    DiscoveryEvents e;
    e.started = [this](DiscoveryReason r) {
      std::lock_guard lock(mu);
      started.push_back(r);
    };
    e.failed = [this] {
      std::lock_guard lock(mu);
      ++failed;
    };
    e.merged = [this](const Fabric&, const MergeOutcome& m, bool p) {
      std::lock_guard lock(mu);
      merged_missing.push_back(m.missing);
      partial.push_back(p);
    };
    e.discovered = [this](const std::string& s) {
      std::lock_guard lock(mu);
      summaries.push_back(s);
    };
    return e;
  }
  std::vector<DiscoveryReason> reasons() {
    std::lock_guard lock(mu);
    return started;
  }
};

class FakeHealth final : public TransportHealth {
 public:
  std::atomic<std::uint64_t> gen{1};
  bool up() const override { return true; }
  std::uint64_t generation() const override { return gen; }
  std::uint64_t restarts() const override { return 0; }
  void after_sweep(std::uint64_t, std::uint64_t) override {}
};

// Spaced requests in milliseconds rather than seconds.
DiscoveryPacing quick_pacing() {
  DiscoveryPacing p;
  p.startup_retry = std::chrono::milliseconds(20);
  p.partial_retry_first = std::chrono::milliseconds(20);
  p.request_spacing = std::chrono::milliseconds(20);
  p.request_spacing_max = std::chrono::milliseconds(80);
  return p;
}

}  // namespace

TEST_CASE("FabricDiscovery: a discovery becomes the current fabric, a failure keeps it",
          "[fabric_discovery]") {
  FakeDiscover discover;
  Recorded rec;
  FabricDiscovery d(discover.fn(), DiscoveryConfig{}, rec.events());
  CHECK(d.fabric() == nullptr);

  CHECK_FALSE(d.discover_now());  // nothing to discover yet
  CHECK(d.fabric() == nullptr);
  CHECK(rec.failed == 1);

  discover.set(test::star_fabric(3));
  REQUIRE(d.discover_now());
  const auto f = d.fabric();
  REQUIRE(f);
  CHECK(f->nodes.size() == 4);
  REQUIRE(rec.summaries.size() == 1);
  CHECK(rec.summaries[0].rfind("discovered 4 nodes, ", 0) == 0);
  CHECK(rec.partial == std::vector<bool>{false});

  discover.next = nullptr;
  CHECK_FALSE(d.discover_now());
  CHECK(rec.failed == 2);
  CHECK(d.fabric() == f);      // the last one stays
  CHECK(rec.started.empty());  // started is the thread's, not discover_now()'s
}

TEST_CASE("FabricDiscovery keeps a node a discovery missed, and forgets it under its policy",
          "[fabric_discovery]") {
  FakeDiscover discover;
  Recorded rec;
  const Fabric full = test::star_fabric(2);
  Fabric without_last = test::star_fabric(1);
  DiscoveryConfig config;  // three discoveries and an hour: nothing forgotten here
  FabricDiscovery d(discover.fn(), config, rec.events());
  discover.set(full);
  REQUIRE(d.discover_now());
  discover.set(without_last);
  REQUIRE(d.discover_now());
  CHECK(d.fabric()->nodes.size() == 3);  // kept, still swept
  CHECK(rec.merged_missing.back() == 1);
  CHECK(rec.partial.back());  // a known node not found makes it partial
  CHECK(d.take_forgotten().empty());

  // A reload: forgotten at the next discovery that misses it.
  config.forget_after_discoveries = 1;
  config.forget_after = std::chrono::milliseconds(0);
  d.reload(config);
  REQUIRE(d.discover_now());
  CHECK(d.fabric()->nodes.size() == 2);
  const std::vector<ForgottenNode> forgotten = d.take_forgotten();
  REQUIRE(forgotten.size() == 1);
  CHECK(forgotten[0].guid == 0x201);
  CHECK(forgotten[0].ports == std::vector<std::uint8_t>{1});
  CHECK(d.take_forgotten().empty());  // taken once
}

TEST_CASE("FabricDiscovery: a node answering at its last LID is not forgotten",
          "[fabric_discovery]") {
  FakeDiscover discover;
  DiscoveryConfig config;
  config.forget_after_discoveries = 2;
  config.forget_after = std::chrono::milliseconds(0);
  FabricDiscovery d(discover.fn(), config);
  discover.set(test::star_fabric(2));
  REQUIRE(d.discover_now());
  discover.set(test::star_fabric(1));
  REQUIRE(d.discover_now());  // missed once
  d.note_answered(0x201);     // the sweep heard it: its count starts again
  REQUIRE(d.discover_now());  // missed once more, not twice in a row
  CHECK(d.take_forgotten().empty());
  REQUIRE(d.discover_now());
  CHECK(d.take_forgotten().size() == 1);
}

TEST_CASE("FabricDiscovery's thread discovers at start, then for what the sweep saw",
          "[fabric_discovery]") {
  FakeDiscover discover;
  discover.set(test::star_fabric(2));
  Recorded rec;
  FabricDiscovery d(discover.fn(), DiscoveryConfig{}, rec.events(), quick_pacing());
  d.start();
  REQUIRE(wait_for([&] { return d.fabric() != nullptr; }));
  CHECK(rec.reasons() == std::vector<DiscoveryReason>{DiscoveryReason::kStartup});

  // Nothing changed: no request. (The schedule is the default 5 minutes.)
  d.note_sweep(0, 0, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  CHECK(discover.calls == 1);

  d.note_sweep(1, 0, false);  // a LID answered as another node
  REQUIRE(wait_for([&] { return discover.calls == 2; }));
  d.note_sweep(0, 4, false);  // LinkDownedCounter totals moved
  REQUIRE(wait_for([&] { return discover.calls == 3; }));
  d.note_sweep(0, 4, false);  // ... and did not move again
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  CHECK(discover.calls == 3);
  d.note_sweep(0, 4, true);  // a node that answered went silent
  REQUIRE(wait_for([&] { return discover.calls == 4; }));
  d.stop();
  CHECK(rec.reasons() ==
        std::vector<DiscoveryReason>{DiscoveryReason::kStartup, DiscoveryReason::kLidMismatch,
                                     DiscoveryReason::kLinkDown, DiscoveryReason::kNodeSilent});
}

TEST_CASE("FabricDiscovery adopts a new worker's generation once its switches have LIDs",
          "[fabric_discovery]") {
  FakeDiscover discover;
  FakeHealth health;
  FabricDiscovery d(discover.fn(), DiscoveryConfig{});
  d.set_transport_health(&health);
  CHECK(d.generation() == 0);
  discover.set(test::star_fabric(2));
  REQUIRE(d.discover_now());
  CHECK(d.generation() == 1);

  // A new worker, and the SM has not assigned the switch a LID yet: the
  // fabric is not taken as discovered through it (sweeps keep waiting)...
  health.gen = 2;
  Fabric unaddressed = test::star_fabric(2);
  unaddressed.nodes[0].lid = 0;
  discover.set(unaddressed);
  for (int i = 1; i < 10; ++i) {
    REQUIRE(d.discover_now());
    CHECK(d.generation() == 1);
  }
  // ... but not for ever: the tenth such discovery is swept as it is.
  REQUIRE(d.discover_now());
  CHECK(d.generation() == 2);

  health.gen = 3;
  discover.set(test::star_fabric(2));
  REQUIRE(d.discover_now());
  CHECK(d.generation() == 3);
}

TEST_CASE("FabricDiscovery stops: idempotent, without start, and mid-wait", "[fabric_discovery]") {
  FakeDiscover discover;
  {
    FabricDiscovery never_started(discover.fn(), DiscoveryConfig{});
    never_started.stop();
    never_started.stop();
  }
  discover.set(test::star_fabric(1));
  FabricDiscovery d(discover.fn(), DiscoveryConfig{}, {}, quick_pacing());
  d.start();
  REQUIRE(wait_for([&] { return d.fabric() != nullptr; }));
  // Waiting for the 5-minute schedule: stop() wakes it.
  const auto before = std::chrono::steady_clock::now();
  d.request_stop();
  d.stop();
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(2));
  d.request(DiscoveryReason::kLinkDown);  // nobody left to run it
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(discover.calls == 1);
  d.stop();
}
