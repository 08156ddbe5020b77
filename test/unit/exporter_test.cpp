// Exporter: how a sweep and a discovery running at the same time combine in
// the published snapshot; what it tells through its status callback.
#include "daemon/exporter.h"

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fake_fabric.h"
#include "fake_pma.h"

using namespace ibfx;
using ibfx::test::FakePma;

namespace {

// A FakePma that runs `hook` once, at the first request sent after it is
// set: something happening in the middle of a sweep.
class HookedPma final : public MadTransport {
 public:
  explicit HookedPma(FakePma& fake) : fake_(fake) {}
  std::function<void()> hook;

  bool send(std::uint16_t lid, const MadBytes& mad, std::chrono::milliseconds timeout) override {
    if (hook) std::exchange(hook, nullptr)();
    return fake_.send(lid, mad, timeout);
  }
  Received receive(std::chrono::milliseconds wait) override { return fake_.receive(wait); }

 private:
  FakePma& fake_;
};

// `f` as a discovery that no longer reaches the node `guid` sees it: the
// node gone, the nodes after it one index down, its peer's port unlinked.
Fabric without(const Fabric& f, std::uint64_t guid) {
  Fabric out;
  std::map<std::int32_t, std::int32_t> moved;
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (f.nodes[i].guid == guid) continue;
    moved[static_cast<std::int32_t>(i)] = static_cast<std::int32_t>(out.nodes.size());
    out.nodes.push_back(f.nodes[i]);
  }
  for (FabricNode& n : out.nodes) {
    for (FabricPort& p : n.ports) {
      if (!p.linked()) continue;
      const auto it = moved.find(p.remote_node);
      if (it != moved.end()) {
        p.remote_node = it->second;
      } else {
        p.remote_node = kNoNode;
        p.state = 1;
        p.phys_state = 2;
      }
    }
  }
  out.index();
  return out;
}

}  // namespace

TEST_CASE("A sweep is published with the fabric it swept, even if a discovery lands meanwhile",
          "[exporter]") {
  // leaf-01, gpu0 (GUID 0x200), gpu1, gpu2. gpu0 stops answering, and the
  // discovery that follows (the daemon asks for one when a node stops
  // answering) no longer finds it: gpu1 takes its index.
  const Fabric before = ibfx::test::star_fabric(3);
  const Fabric after = without(before, 0x200);
  REQUIRE(after.nodes[1].guid == 0x201);
  FakePma fake;
  for (const FabricNode& n : before.nodes) fake.nodes[n.lid];
  fake.nodes[2].silent = true;  // gpu0

  auto transport = std::make_unique<HookedPma>(fake);
  HookedPma& hooked = *transport;
  int discoveries = 0;
  Config config;
  config.mad.timeout = std::chrono::milliseconds(10);
  config.mad.retries = 0;
  Exporter exporter(config, {}, std::move(transport), [&] {
    ++discoveries;
    return DiscoveryResult{std::make_shared<const Fabric>(discoveries == 1 ? before : after), {}};
  });
  REQUIRE(exporter.discover_now());
  bool rediscovered = false;
  hooked.hook = [&] { rediscovered = exporter.discover_now(); };
  REQUIRE(exporter.sweep_now());
  REQUIRE(rediscovered);

  // Every node's status in the snapshot is that node's: only gpu0 failed.
  const auto snap = exporter.snapshot();
  REQUIRE(snap != nullptr);
  REQUIRE(snap->node_status.size() == snap->fabric->nodes.size());
  for (std::size_t n = 0; n < snap->fabric->nodes.size(); ++n) {
    const FabricNode& node = snap->fabric->nodes[n];
    INFO(node.description << " (present " << node.present << ")");
    CHECK(snap->node_status[n].answered == (node.guid != 0x200));
  }
  // The next sweep runs on the new fabric.
  REQUIRE(exporter.sweep_now());
  CHECK(exporter.snapshot()->fabric->nodes[1].guid == 0x201);
  CHECK(exporter.snapshot()->node_status[1].answered);
}

TEST_CASE(
    "Exporter says what it does through its status callback, and publishes rendered snapshots",
    "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(3);
  FakePma fake;
  for (const FabricNode& n : fabric.nodes) fake.nodes[n.lid];
  Config config;
  config.sweep_interval = std::chrono::milliseconds(200);
  Exporter exporter(config, {}, std::make_unique<HookedPma>(fake), [&] {
    return DiscoveryResult{std::make_shared<const Fabric>(fabric), {}};
  });
  std::mutex mu;
  std::vector<std::string> said;
  exporter.set_status_callback([&](const std::string& text) {
    std::lock_guard lock(mu);
    said.push_back(text);
  });
  REQUIRE(exporter.discover_now());
  REQUIRE(said.size() == 1);
  CHECK(said[0].rfind("discovered 4 nodes", 0) == 0);
  CHECK(said[0].find("first sweep running") != std::string::npos);
  CHECK_FALSE(exporter.ready());

  // sweep_now() returns with the snapshot rendered and served.
  REQUIRE(exporter.sweep_now());
  CHECK(exporter.ready());
  CHECK(exporter.publisher_stats().published == 1);
  REQUIRE(said.size() == 2);
  CHECK(said[1].rfind("last sweep: ", 0) == 0);
  CHECK(said[1].find("0 nodes not answering") != std::string::npos);
  REQUIRE(exporter.snapshot() != nullptr);
  CHECK_FALSE(exporter.snapshot()->gzip().empty());

  // In the background the publisher thread renders: sweeps go on, every
  // publication is told, and nothing is left unpublished at stop().
  exporter.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (exporter.publisher_stats().published < 4 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  exporter.stop();
  const PublisherStats st = exporter.publisher_stats();
  CHECK(st.published >= 4);
  std::lock_guard lock(mu);
  CHECK(said.size() == 1 + st.published);
}

TEST_CASE("Exporter exports its publisher's health: snapshots published and dropped, render time",
          "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(3);
  FakePma fake;
  for (const FabricNode& n : fabric.nodes) fake.nodes[n.lid];
  Exporter exporter(Config{}, {}, std::make_unique<HookedPma>(fake), [&] {
    return DiscoveryResult{std::make_shared<const Fabric>(fabric), {}};
  });
  REQUIRE(exporter.discover_now());
  auto value = [](const std::string& text, const std::string& name) {
    const auto at = text.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 2));
  };
  // The first snapshot is built before anything was published.
  REQUIRE(exporter.sweep_now());
  std::string text = exporter.snapshot()->text();
  CHECK(value(text, "infiniband_exporter_snapshots_published_total") == 0);
  CHECK(value(text, "infiniband_exporter_snapshots_dropped_total") == 0);
  // The second says the first was published, and how long its render took.
  REQUIRE(exporter.sweep_now());
  text = exporter.snapshot()->text();
  CHECK(value(text, "infiniband_exporter_snapshots_published_total") == 1);
  CHECK(value(text, "infiniband_exporter_snapshots_dropped_total") == 0);
  CHECK(value(text, "infiniband_exporter_last_render_duration_seconds") > 0);
}
