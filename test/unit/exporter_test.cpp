// Exporter, on the fake PMA: how a sweep and a discovery running at the same
// time combine in the published snapshot; what it tells through its status
// callback; counters published and accumulated; node_up; a sweep cut short by
// its budget; rediscovery requests; reload; start and stop.
#include "daemon/exporter.h"

#include <sys/stat.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config/config_error.h"
#include "test/support/controlled_pma.h"
#include "test/support/fake_fabric.h"
#include "test/support/fake_pma.h"
#include "test/support/snapshot_support.h"
#include "test/support/stderr_capture.h"
#include "test/support/temp_dir.h"
#include "test/support/text_lines.h"
#include "test/support/wait_for.h"

using namespace ibfx;
using ibfx::test::ControlledPma;
using ibfx::test::fake_for;
using ibfx::test::FakePma;
using ibfx::test::wait_for;

namespace {

using ibfx::test::has_line;

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
  CHECK_FALSE(test::gzip_of(*exporter.snapshot()).empty());

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

namespace {

Config quick_config() {
  Config config;
  config.mad.timeout = std::chrono::milliseconds(10);
  config.mad.retries = 0;
  return config;
}

// One MAD at a time, so that slow answers (ControlledPma::delay_ms) delay
// the sweep, never past a MAD's 20 ms timeout: the budget is
// max(interval, two 20 ms retry chains) = 40 ms, a few slow MADs.
Config budget_config(std::chrono::milliseconds interval) {
  Config config;
  config.mad.timeout = std::chrono::milliseconds(20);
  config.mad.retries = 0;
  config.mad.global_inflight = 1;
  config.mad.per_node_inflight = 1;
  config.sweep_interval = interval;
  return config;
}

DiscoverFn discover_always(const Fabric& f, std::atomic<int>* count = nullptr) {
  auto fabric = std::make_shared<const Fabric>(f);
  return [fabric, count] {
    if (count != nullptr) ++*count;
    return DiscoveryResult{fabric, {}};
  };
}

const PortView& port_of(const Snapshot& snap, std::uint64_t guid, std::uint8_t number) {
  for (const PortView& v : snap.ports) {
    const FabricNode& n = snap.fabric->nodes[v.node];
    if (n.guid == guid && n.ports[v.port_index].number == number) return v;
  }
  throw std::runtime_error("no such port in the snapshot");
}

std::uint64_t total(const PortView& v, Counter c) { return v.totals[static_cast<std::size_t>(c)]; }

std::string node_up(std::uint64_t guid, int up) {
  return "infiniband_exporter_node_up{node_guid=\"" + guid_hex(guid) + "\"} " + std::to_string(up);
}

}  // namespace

TEST_CASE("Exporter publishes a sweep's counters and accumulates them across sweeps",
          "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  // gpu0's port (LID 2), and the switch port facing it (LID 1, port 1).
  fake.nodes[2].ports[1].extended[IB_PC_EXT_XMT_BYTES_F] = 1000;
  fake.nodes[2].ports[1].extended[IB_PC_EXT_RCV_PKTS_F] = 70;
  fake.nodes[2].ports[1].narrow[IB_PC_ERR_SYM_F] = 3;
  fake.nodes[1].ports[1].extended[IB_PC_EXT_RCV_BYTES_F] = 1000;
  Exporter exporter(quick_config(), {}, std::make_unique<HookedPma>(fake), discover_always(fabric));
  CHECK_FALSE(exporter.sweep_now());  // no fabric yet: nothing to sweep
  CHECK(exporter.snapshot() == nullptr);
  REQUIRE(exporter.discover_now());
  REQUIRE(exporter.sweep_now());

  auto snap = exporter.snapshot();
  REQUIRE(snap != nullptr);
  CHECK(snap->sweep_totals.ports_read == 4);  // two switch ports, two HCA ports
  const PortView& gpu0 = port_of(*snap, 0x200, 1);
  CHECK(gpu0.has_counters);
  // The first reading is the starting total (the device's own count).
  CHECK(total(gpu0, Counter::kTransmitDataBytes) == 1000);
  CHECK(total(gpu0, Counter::kReceivePackets) == 70);
  CHECK(total(gpu0, Counter::kSymbolErrors) == 3);
  CHECK(total(port_of(*snap, 0x100, 1), Counter::kReceiveDataBytes) == 1000);
  CHECK(total(port_of(*snap, 0x201, 1), Counter::kTransmitDataBytes) == 0);
  CHECK(has_line(exposition_text(*snap), "infiniband_exporter_sweeps_total 1"));

  // The device counts on; a narrow counter someone else cleared restarts
  // from zero, and the total never goes down.
  fake.nodes[2].ports[1].extended[IB_PC_EXT_XMT_BYTES_F] = 1500;
  fake.nodes[2].ports[1].extended[IB_PC_EXT_RCV_PKTS_F] = 100;
  fake.nodes[2].ports[1].narrow[IB_PC_ERR_SYM_F] = 2;
  REQUIRE(exporter.sweep_now());
  snap = exporter.snapshot();
  const PortView& again = port_of(*snap, 0x200, 1);
  CHECK(total(again, Counter::kTransmitDataBytes) == 1500);
  CHECK(total(again, Counter::kReceivePackets) == 100);
  CHECK(total(again, Counter::kSymbolErrors) == 3 + 2);
  CHECK(has_line(exposition_text(*snap), "infiniband_exporter_sweeps_total 2"));
  CHECK(exporter.publisher_stats().published == 2);
}

TEST_CASE("Exporter shows a node as down only when it was asked and answered nothing",
          "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(3);
  FakePma fake = fake_for(fabric);
  fake.nodes[3].silent = true;  // gpu1
  Exporter exporter(quick_config(), {}, std::make_unique<HookedPma>(fake), discover_always(fabric));
  REQUIRE(exporter.discover_now());
  REQUIRE(exporter.sweep_now());
  auto snap = exporter.snapshot();
  std::string text = exposition_text(*snap);
  CHECK(has_line(text, node_up(0x100, 1)));
  CHECK(has_line(text, node_up(0x200, 1)));
  CHECK(has_line(text, node_up(0x201, 0)));
  CHECK(has_line(text, node_up(0x202, 1)));
  CHECK(has_line(text, "infiniband_exporter_nodes_not_answering 1"));
  CHECK_FALSE(port_of(*snap, 0x201, 1).has_counters);

  // With HCAs left out of the sweep (counters.include_hcas: false), gpu1 is
  // no longer asked: it is not shown as down, and nothing counts it.
  Config config = quick_config();
  config.counters.include_hcas = false;
  CHECK(exporter.reload(config, {}, {}).empty());
  REQUIRE(exporter.sweep_now());
  text = exposition_text(*exporter.snapshot());
  CHECK(text.find(node_up(0x201, 0)) == std::string::npos);
  CHECK(has_line(text, node_up(0x100, 1)));
  CHECK(has_line(text, "infiniband_exporter_nodes_not_answering 0"));

  // Asked again, and answering now: up.
  fake.nodes[3].silent = false;
  CHECK(exporter.reload(quick_config(), {}, {}).empty());
  REQUIRE(exporter.sweep_now());
  CHECK(has_line(exposition_text(*exporter.snapshot()), node_up(0x201, 1)));
}

TEST_CASE("Exporter: a sweep cut short by its budget marks nothing down and counts an overrun",
          "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(8);
  FakePma fake = fake_for(fabric);
  auto transport = std::make_unique<ControlledPma>(fake);
  ControlledPma& pma = *transport;
  Exporter exporter(budget_config(std::chrono::milliseconds(20)), {}, std::move(transport),
                    discover_always(fabric));
  REQUIRE(exporter.discover_now());
  REQUIRE(exporter.sweep_now());  // a fast fabric: every node answers
  auto snap = exporter.snapshot();
  REQUIRE(snap->sweep_totals.completed);
  CHECK(has_line(exposition_text(*snap), "infiniband_exporter_sweep_overruns_total 0"));

  // Now each answer takes 10 ms: the 40 ms budget covers a few of them.
  pma.delay_ms = 10;
  REQUIRE(exporter.sweep_now());
  snap = exporter.snapshot();
  REQUIRE_FALSE(snap->sweep_totals.completed);
  CHECK(snap->sweep_totals.stale_nodes > 0);
  const std::string text = exposition_text(*snap);
  // The nodes it did not reach keep their last state: up, like the others.
  for (const FabricNode& n : fabric.nodes) {
    INFO(n.description);
    CHECK(has_line(text, node_up(n.guid, 1)));
  }
  CHECK(has_line(text, "infiniband_exporter_nodes_not_answering 0"));
  CHECK(has_line(text, "infiniband_exporter_sweeps_incomplete_total 1"));
  // It took longer than the 20 ms interval.
  CHECK(has_line(text, "infiniband_exporter_sweep_overruns_total 1"));
}

TEST_CASE("Exporter asks for a rediscovery when a node goes silent, never for a sweep cut short",
          "[exporter]") {
  // Discoveries are requests spaced 3 s after the last one (DiscoveryPacer);
  // the schedule (5 min) does not come into it.
  const Fabric fabric = ibfx::test::star_fabric(8);
  FakePma fake = fake_for(fabric);
  auto transport = std::make_unique<ControlledPma>(fake);
  ControlledPma& pma = *transport;
  std::atomic<int> discoveries{0};
  Exporter exporter(budget_config(std::chrono::milliseconds(50)), {}, std::move(transport),
                    discover_always(fabric, &discoveries));
  exporter.start();
  REQUIRE(wait_for([&] { return exporter.ready(); }));
  REQUIRE(exporter.snapshot()->sweep_totals.completed);

  SECTION("cut short") {
    pma.delay_ms = 10;  // every sweep from now is cut short
    const auto cut = exporter.publisher_stats().published;
    REQUIRE(wait_for([&] { return exporter.publisher_stats().published >= cut + 3; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    const auto snap = exporter.snapshot();
    CHECK_FALSE(snap->sweep_totals.completed);
    CHECK(discoveries == 1);
    for (const NodeSweep& ns : snap->node_status) CHECK(ns.answered);
  }
  SECTION("went silent") {
    pma.with_fake([](FakePma& f) { f.nodes[4].silent = true; });  // gpu2
    CHECK(wait_for([&] { return discoveries >= 2; }));
  }
  exporter.stop();
}

TEST_CASE("Exporter applies a reloaded configuration to the next sweep, keeping the totals",
          "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  fake.nodes[2].ports[1].extended[IB_PC_EXT_XMT_BYTES_F] = 400;
  Config config = quick_config();
  config.listen_address = ":9683";
  Exporter exporter(config, {}, std::make_unique<HookedPma>(fake), discover_always(fabric));
  REQUIRE(exporter.discover_now());
  REQUIRE(exporter.sweep_now());
  CHECK(exporter.snapshot()->node_names[1] == "gpu0 mlx5_0");
  const int switch_reads = fake.nodes[1].requests[kAttrPortCountersExtended];
  const int hca_reads = fake.nodes[2].requests[kAttrPortCountersExtended];
  REQUIRE(hca_reads > 0);

  Config next = quick_config();
  next.listen_address = ":9999";                        // needs a restart: kept
  next.telemetry_path = "/other";                       // needs a restart: kept
  next.history.coarse_window = std::chrono::hours(48);  // needs a restart: kept
  next.sweep_interval = std::chrono::seconds(3);        // applied
  next.counters.include_hcas = false;                   // applied
  const auto restart = exporter.reload(next, {{0x200, "node-a"}}, {});
  CHECK(restart == std::vector<std::string>{"listen_address", "telemetry_path", "history"});
  CHECK(exporter.config().listen_address == ":9683");
  CHECK(exporter.config().telemetry_path == config.telemetry_path);
  CHECK(exporter.config().history == config.history);
  CHECK(exporter.config().sweep_interval == std::chrono::seconds(3));

  fake.nodes[2].ports[1].extended[IB_PC_EXT_XMT_BYTES_F] = 900;
  REQUIRE(exporter.sweep_now());
  const auto snap = exporter.snapshot();
  CHECK(snap->node_names[1] == "node-a");  // the new node-name-map
  CHECK(fake.nodes[1].requests[kAttrPortCountersExtended] > switch_reads);
  CHECK(fake.nodes[2].requests[kAttrPortCountersExtended] == hca_reads);  // HCAs not read
  // gpu0 was not read, and its total stays what it was.
  CHECK(total(port_of(*snap, 0x200, 1), Counter::kTransmitDataBytes) == 400);
}

namespace {

// Values tried, in order, to change a setting away from quick_config()'s:
// the first that the parser accepts and that reads back differently. Each
// key of the file must find one (a new key may need one added here);
// `file` is an existing empty file (a host map, say).
std::vector<std::string> reload_candidates(const std::string& file) {
  return {"true",   "false", "3",     "7",      "0.5",    "3s",   "30s",
          "2h",     file,    ":9999", "mlx5_3", "squeue", "none", "^(gpu[0-9]+)",
          "never",  "all",   "x",     "60",     "debug",  "json", "http://127.0.0.1:6820",
          "v0.0.39"};
}

// `key` of `base` changed to the first of `candidates` that the parser
// takes, reads back differently and `accepted` takes (empty: none did).
std::optional<Config> reload_changed(const Config& base, std::string_view key,
                                     const std::vector<std::string>& candidates,
                                     const std::function<bool(const Config&)>& accepted) {
  const std::string before = config_value_text(base, key);
  for (const std::string& text : candidates) {
    Config next = base;
    try {
      set_config_value(next, key, text);
    } catch (const ConfigError&) {
      continue;
    }
    if (config_value_text(next, key) == before || !accepted(next)) continue;
    return next;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE(
    "Exporter reload: every setting of the file is either applied or named as needing a restart",
    "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  const Config base = quick_config();
  const ibfx::test::TempDir dir;
  const std::vector<std::string> candidates = reload_candidates(dir.write("empty", ""));
  std::size_t applied = 0;
  std::size_t restart = 0;
  for (std::string_view key : config_keys()) {
    INFO(key);
    Exporter exporter(base, {}, std::make_unique<HookedPma>(fake), discover_always(fabric));
    // A candidate the reload accepts as a whole (a file the jobs settings
    // name must exist, say): a rejected reload applies nothing at all.
    std::vector<std::string> needs_restart;
    const auto next = reload_changed(base, key, candidates, [&](const Config& c) {
      try {
        needs_restart = exporter.reload(c, {}, {});
        return true;
      } catch (const ConfigError&) {
        return false;
      }
    });
    CHECK(next);
    if (!next) continue;
    const std::string_view section = restart_only_setting_of(key);
    if (section.empty()) {
      // Applied: the running configuration has the new value, nothing said.
      CHECK(config_value_text(exporter.config(), key) == config_value_text(*next, key));
      CHECK(needs_restart.empty());
      ++applied;
    } else {
      // Needs a restart: the running value kept, and said so by name.
      CHECK(config_value_text(exporter.config(), key) == config_value_text(base, key));
      CHECK(needs_restart == std::vector<std::string>{std::string(section)});
      ++restart;
    }
  }
  CHECK(applied + restart == config_keys().size());
  CHECK(restart >= restart_only_settings().size());
}

TEST_CASE("Exporter stops cleanly: idempotent, without start, and nothing runs afterwards",
          "[exporter]") {
  const Fabric fabric = ibfx::test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  {
    Exporter never_started(quick_config(), {}, std::make_unique<HookedPma>(fake),
                           discover_always(fabric));
    never_started.stop();
    never_started.stop();
  }  // and the destructor stops again

  std::atomic<int> discoveries{0};
  Config config = quick_config();
  config.sweep_interval = std::chrono::milliseconds(20);
  Exporter exporter(config, {}, std::make_unique<HookedPma>(fake),
                    discover_always(fabric, &discoveries));
  exporter.start();
  REQUIRE(wait_for([&] { return exporter.publisher_stats().published >= 3; }));
  // A reload while running goes through the sweep thread.
  config.sweep_interval = std::chrono::milliseconds(30);
  CHECK(exporter.reload(config, {{0x201, "node-b"}}, {}).empty());
  // Snapshots of sweeps before the reload may still be published after it
  // returns (seen under ASan): wait for one swept with the new names.
  CHECK(wait_for([&] {
    const auto snap = exporter.snapshot();
    return snap && snap->node_names.size() > 2 && snap->node_names[2] == "node-b";
  }));
  exporter.stop();
  exporter.stop();
  CHECK(discoveries == 1);  // the start-up one; nothing asked for another
  const auto published = exporter.publisher_stats().published;
  const auto sent = fake.sent;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(exporter.publisher_stats().published == published);
  CHECK(fake.sent == sent);
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
  std::string text = exposition_text(*exporter.snapshot());
  CHECK(value(text, "infiniband_exporter_snapshots_published_total") == 0);
  CHECK(value(text, "infiniband_exporter_snapshots_dropped_total") == 0);
  // The second says the first was published, and how long its render took.
  REQUIRE(exporter.sweep_now());
  text = exposition_text(*exporter.snapshot());
  CHECK(value(text, "infiniband_exporter_snapshots_published_total") == 1);
  CHECK(value(text, "infiniband_exporter_snapshots_dropped_total") == 0);
  CHECK(value(text, "infiniband_exporter_last_render_duration_seconds") > 0);
  // The first snapshot had no snapshot before it: all of it was deflated.
  CHECK(value(text, "infiniband_exporter_last_render_reused_ratio") == 0);
  // The next ones reuse the deflated blocks of what did not change.
  REQUIRE(exporter.sweep_now());
  const PublisherStats stats = exporter.publisher_stats();
  CHECK(stats.last_reused_bytes + stats.last_deflated_bytes ==
        exporter.publication()->exposition.text_size());
  REQUIRE(exporter.sweep_now());
  text = exposition_text(*exporter.snapshot());
  const double ratio = value(text, "infiniband_exporter_last_render_reused_ratio");
  CHECK(ratio >= 0);
  CHECK(ratio <= 1);
}

TEST_CASE("Exporter with jobs.source: each sweep joins the latest job list, reload turns it off",
          "[exporter][jobs]") {
  // squeue --json as a real child: job 7 on gpu0 (star_fabric's "gpu0
  // mlx5_0"), job 8 on a host with no HCA in the fabric.
  ibfx::test::TempDir dir;
  const std::string squeue =
      dir.write("squeue",
                "#!/bin/sh\ncat <<'EOF'\n"
                R"({"jobs":[{"job_id":7,"name":"train","user_name":"alice","partition":"gpu",)"
                R"("job_state":"RUNNING","nodes":"gpu0"},{"job_id":8,"name":"x","user_name":"bob",)"
                R"("partition":"cpu","job_state":"RUNNING","nodes":"cpu[01-02]"}]})"
                "\nEOF\n");
  ::chmod(squeue.c_str(), 0755);
  const Fabric fabric = ibfx::test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  Config config = quick_config();
  config.sweep_interval = std::chrono::milliseconds(50);
  config.jobs.source = "squeue";
  config.jobs.squeue_command = squeue;
  ibfx::test::StderrCapture log;
  Exporter exporter(config, {}, std::make_unique<HookedPma>(fake), discover_always(fabric));
  exporter.start();
  REQUIRE(wait_for([&] {
    const auto snap = exporter.snapshot();
    return snap && snap->jobs.source_up && snap->jobs.join.jobs.size() == 2;
  }));
  // The hosts that match no HCA are named, once (at most once a minute).
  REQUIRE(wait_for([&] { return log.text().find("match no HCA") != std::string::npos; }));
  CHECK(log.text().find(R"(2 hosts of 1 running Slurm jobs match no HCA in the fabric )"
                        R"((\"cpu01\", \"cpu02\"; jobs.host_regex)") != std::string::npos);
  auto snap = exporter.snapshot();
  CHECK(snap->jobs.enabled);
  CHECK(snap->jobs.last_success_seconds > 0);
  const JobPorts& train = snap->jobs.join.jobs[0];
  CHECK(train.job_id == 7);
  CHECK(train.hca_ports == 1);
  CHECK(train.hosts_unknown == 0);
  CHECK(snap->jobs.join.jobs[1].hca_ports == 0);
  CHECK(snap->jobs.join.unknown_hosts == 2);
  const std::string text = exposition_text(*snap);
  CHECK(has_line(text, R"(infiniband_job_info{job_id="7",job_name="train",user="alice",)"
                       R"(partition="gpu"} 1)"));
  CHECK(has_line(text, R"(infiniband_job_hca_ports{job_id="7"} 1)"));
  CHECK(has_line(text, "infiniband_exporter_job_source_up 1"));
  CHECK(has_line(text, "infiniband_exporter_job_hosts_unmatched 2"));

  // A host map that cannot be read rejects the whole reload: jobs stay on.
  Config bad = config;
  bad.jobs.host_map = dir.path() + "/absent";
  bad.sweep_interval = std::chrono::milliseconds(60);
  CHECK_THROWS_AS(exporter.reload(bad, {}, {}), ConfigError);
  CHECK(exporter.config().sweep_interval == std::chrono::milliseconds(50));
  CHECK(exporter.config().jobs.source == "squeue");

  // jobs.source: none on SIGHUP: the job series go with the next sweep.
  Config off = config;
  off.jobs = JobsConfig{};
  CHECK(exporter.reload(off, {}, {}).empty());
  // Snapshots of sweeps that ran before the reload may still be in the
  // publisher's hands (under TSan two of them were published after it
  // returned): wait for the first one swept with the new settings.
  REQUIRE(wait_for([&] {
    const auto s = exporter.snapshot();
    return s && !s->jobs.enabled;
  }));
  snap = exporter.snapshot();
  CHECK_FALSE(snap->jobs.enabled);
  CHECK(exposition_text(*snap).find("infiniband_job") == std::string::npos);
  CHECK(exposition_text(*snap).find("job_source_up") == std::string::npos);
  exporter.stop();
}

// Link health on a fake PMA (issue #34: ibsim has neither CapabilityMask2
// nor the 64-bit error counters): gpu0's PMA has them, gpu1's 16-bit
// SymbolErrorCounter saturates.
TEST_CASE("Exporter judges each cable: 64-bit symbol errors, a saturated 16-bit counter",
          "[exporter][links]") {
  const Fabric fabric = ibfx::test::star_fabric(2);
  FakePma fake = fake_for(fabric);
  fake.nodes[2].cap_mask2 = pma_cap::kAddlPortCountersExt;
  fake.nodes[2].ports[1].extended[IB_PC_EXT_ERR_SYM_F] = 100;
  fake.nodes[3].ports[1].narrow[IB_PC_ERR_SYM_F] = 0xfff0;
  Exporter exporter(quick_config(), {}, std::make_unique<HookedPma>(fake), discover_always(fabric));
  REQUIRE(exporter.discover_now());
  REQUIRE(exporter.sweep_now());
  // The first reading is the starting point: no verdict from it.
  CHECK(exporter.snapshot()->links->links.empty());
  fake.nodes[2].ports[1].extended[IB_PC_EXT_ERR_SYM_F] = 100 + 200000;  // past 16 bits
  fake.nodes[3].ports[1].narrow[IB_PC_ERR_SYM_F] = 0xffff;              // saturated
  REQUIRE(exporter.sweep_now());
  const auto snap = exporter.snapshot();
  REQUIRE(snap->links->links.size() == 2);
  for (const LinkReport& l : snap->links->links) {
    INFO(guid_hex(l.b.guid));
    CHECK(l.condition == LinkCondition::kBerError);
    CHECK(l.a.guid == 0x100);  // the switch end, the smaller GUID
    CHECK(l.b_receives_worse());
    if (l.b.guid == 0x200) {
      CHECK(l.into_b.long_window.symbol == 200000);
      CHECK_FALSE(l.into_b.at_least);
    } else {
      CHECK(l.into_b.long_window.symbol == 0xffff - 0xfff0);
      CHECK(l.into_b.at_least);
    }
  }
  CHECK(has_line(exposition_text(*snap),
                 "infiniband_link_unhealthy{node_guid=\"0x0000000000000200\",port=\"1\","
                 "remote_node_guid=\"0x0000000000000100\",remote_port=\"1\",condition="
                 "\"ber_error\"} 1"));
  CHECK(
      has_line(exposition_text(*snap), "infiniband_link_events_total{condition=\"ber_error\"} 2"));
}
