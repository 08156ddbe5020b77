// The subnet manager restarts and gives every port a different LID, while
// the daemon is running. A LID is only an address: the daemon must keep each
// port's totals on its GUID and port number, rediscover, and never count one
// port's counters into another's. The restart permutes the LIDs, so every old
// LID is still valid and answers for another port: the worst case, where a
// sweep to a stale LID silently reads someone else's counters.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "daemon_fixture.h"

using namespace ibfx::test;

namespace {

struct WatchedPort {
  std::string node;
  std::string type;  // node_type label
  int port = 0;
  std::string guid;  // node_guid label, from the daemon's node_info
  std::uint64_t wait_before = 0;
  std::uint64_t wait_after = 0;   // == wait_before for ports left alone
  std::uint64_t data_before = 0;  // PortXmitData in words
  std::uint64_t data_after = 0;
  std::string wait_key() const {
    return "infiniband_port_transmit_wait_total" + port_labels(guid, node, type, port);
  }
  std::string data_key() const {
    return "infiniband_port_transmit_data_bytes_total" + port_labels(guid, node, type, port);
  }
};

// PortXmitData also counts the MADs the simulator forwards (the daemon's
// own polling among them): allow that much on top of what we set. Values
// are set 10^8 words apart, far more than this, so a foreign value cannot
// pass for a port's own.
constexpr double kTrafficSlackBytes = 4.0e7;

void set_port(SimFabric& sim, const WatchedPort& p, std::uint64_t wait, std::uint64_t data) {
  sim.perf_set(p.node, p.port, "PortCounters.PortXmitWait", wait);
  // Both widths, so that the check does not depend on which one the
  // daemon reads (PortCountersExtended where the PMA advertises it).
  sim.perf_set(p.node, p.port, "PortCounters.PortXmitData", data);
  sim.perf_set(p.node, p.port, "PortCountersExtended.PortXmitData", data);
}

bool data_matches(double bytes, std::uint64_t words) {
  const double set = 4.0 * static_cast<double>(words);
  return bytes >= set && bytes < set + kTrafficSlackBytes;
}

// The LID of node `name` (infiniband_node_lid, joined to the name by its
// GUID); -1 if absent.
int exported_lid(const Series& s, const std::string& name) {
  const std::string guid = guid_of(s, name);
  const auto it = s.find("infiniband_node_lid{node_guid=\"" + guid + "\"}");
  return guid.empty() || it == s.end() ? -1 : static_cast<int>(it->second);
}

}  // namespace

// What keeps it passing: the sweep confirms with a LID-routed NodeInfo SMP
// that every LID it read still belongs to the node (sweep/sweeper.cpp),
// which needs the MAD worker's Subnet Management agent (mad_transport.cpp).
TEST_CASE("SM restart moves every LID: each port keeps its own counters, by GUID and port",
          "[lid][faults][integration]") {
  FatTreeSpec spec;
  spec.servers = 2;
  spec.rails = 2;
  spec.radix = 8;
  const Fabric fabric = make_fat_tree(spec);
  SimFabric sim(fabric);

  // Every cabled port of every node gets its own PortXmitWait and
  // PortXmitData, distinct from all others.
  std::vector<WatchedPort> ports;
  for (const auto& node : fabric.nodes()) {
    for (int p = 1; p <= node.num_ports(); ++p) {
      if (!node.ports[static_cast<std::size_t>(p)].connected()) continue;
      WatchedPort w;
      w.node = node.name;
      w.type = node.is_switch() ? "switch" : "hca";
      w.port = p;
      const auto i = static_cast<std::uint64_t>(ports.size() + 1);
      w.wait_before = 1000 * i;
      w.data_before = 100'000'000 * i;
      // Every other port gets new, larger values after the restart; the
      // rest must keep exactly what they had.
      const bool changes = i % 2 == 1;
      w.wait_after = changes ? w.wait_before + 500'000 : w.wait_before;
      w.data_after = changes ? w.data_before + 50'000'000 : w.data_before;
      set_port(sim, w, w.wait_before, w.data_before);
      ports.push_back(w);
    }
  }
  const std::map<std::string, int> lids_before = sim.lids();

  Daemon daemon(sim, {"--sweep.interval=500ms", config_flag(sim, kRawWaitYaml)});
  REQUIRE(daemon.wait_ready());
  Series s = daemon.series();
  for (auto& w : ports) {
    w.guid = guid_of(s, w.node);
    REQUIRE(!w.guid.empty());
  }
  // Before the restart every port shows its own values.
  for (const auto& w : ports) {
    INFO(w.node << " port " << w.port);
    REQUIRE(daemon.wait_value(w.wait_key(), static_cast<double>(w.wait_before)));
    REQUIRE(data_matches(value(daemon.series(), w.data_key()), w.data_before));
  }

  // From here until the end a watcher scrapes /metrics every 100 ms and
  // notes every violation of what must hold throughout the transition:
  //  - no *_total series ever goes backwards;
  //  - a port's PortXmitWait total is only ever its own old or new value:
  //    anything else means another port's counters leaked into it (a read
  //    at a stale LID) or its delta was mis-computed from a foreign reading;
  //  - likewise its PortXmitData stays within its own values plus traffic.
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> violations;
  std::size_t scrapes = 0;
  std::thread watcher([&] {
    Series prev = daemon.series();
    while (!stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      Series cur;
      try {
        cur = daemon.series();
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        violations.push_back(std::string("scrape failed: ") + e.what());
        continue;
      }
      std::lock_guard lock(mu);
      ++scrapes;
      for (const auto& [key, v] : prev) {
        const std::string family = key.substr(0, key.find('{'));
        if (!family.ends_with("_total")) continue;
        const auto it = cur.find(key);
        if (it != cur.end() && it->second < v) {
          violations.push_back(key + " went backwards: " + std::to_string(v) + " -> " +
                               std::to_string(it->second));
        }
      }
      for (const auto& w : ports) {
        double wait = 0;
        double data = 0;
        try {
          wait = value(cur, w.wait_key());
          data = value(cur, w.data_key());
        } catch (const std::out_of_range&) {
          violations.push_back(w.node + " port " + std::to_string(w.port) + " vanished");
          continue;
        }
        if (wait != static_cast<double>(w.wait_before) &&
            wait != static_cast<double>(w.wait_after)) {
          violations.push_back(w.node + " port " + std::to_string(w.port) + " PortXmitWait " +
                               std::to_string(wait) + ", its own is " +
                               std::to_string(w.wait_before) + " or " +
                               std::to_string(w.wait_after));
        }
        if (!data_matches(data, w.data_before) && !data_matches(data, w.data_after)) {
          violations.push_back(w.node + " port " + std::to_string(w.port) + " PortXmitData " +
                               std::to_string(data) + " bytes, its own is " +
                               std::to_string(4 * w.data_before) + " or " +
                               std::to_string(4 * w.data_after) + " (+ traffic)");
        }
      }
      prev = std::move(cur);
    }
  });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join{stop, watcher};

  const Series before = daemon.series();
  const double discoveries = value(before, "infiniband_exporter_discoveries_total");

  // The SM restarts with every LID rotated to the next port's: each old LID
  // stays routable and now answers for a different node.
  std::map<std::uint64_t, int> assignment = sim.sm_lid_assignment();
  REQUIRE(assignment.size() >= lids_before.size());
  std::vector<int> old_lids;
  for (const auto& [guid, lid] : assignment) old_lids.push_back(lid);
  std::size_t k = 0;
  for (auto& [guid, lid] : assignment) lid = old_lids[++k % old_lids.size()];
  sim.restart_opensm(assignment);
  const std::map<std::string, int> lids_after = sim.lids();
  // The oracle (ibnetdiscover) agrees that every node moved.
  for (const auto& [name, lid] : lids_before) {
    INFO(name);
    REQUIRE(lids_after.contains(name));
    CHECK(lids_after.at(name) != lid);
  }

  // New values on every other port, after the LIDs moved.
  for (const auto& w : ports) {
    if (w.wait_after != w.wait_before) set_port(sim, w, w.wait_after, w.data_after);
  }

  // Within a bounded time (rediscovery is rate-limited to one per 3 s) every
  // series shows exactly its own port's values.
  const bool settled = eventually(
      [&] {
        const Series cur = daemon.series();
        for (const auto& w : ports) {
          try {
            if (value(cur, w.wait_key()) != static_cast<double>(w.wait_after)) return false;
            if (!data_matches(value(cur, w.data_key()), w.data_after)) return false;
          } catch (const std::out_of_range&) {
            return false;
          }
        }
        return true;
      },
      std::chrono::seconds(20));
  // A few more sweeps at the new LIDs, still watched.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop = true;
  watcher.join();

  const Series after = daemon.series();
  for (const auto& w : ports) {
    INFO(w.node << " port " << w.port << " (LID " << lids_before.at(w.node) << " -> "
                << lids_after.at(w.node) << ")");
    CHECK(value(after, w.wait_key()) == static_cast<double>(w.wait_after));
    CHECK(data_matches(value(after, w.data_key()), w.data_after));
  }
  CHECK(settled);
  // The daemon rediscovered, and what it exports as LIDs are the new ones.
  CHECK(value(after, "infiniband_exporter_discoveries_total") > discoveries);
  for (const auto& [name, lid] : lids_after) {
    INFO(name);
    CHECK(exported_lid(after, name) == lid);
  }
  // What kept the stale readings out: the sweep's NodeInfo check.
  CHECK(value(after, "infiniband_exporter_lid_mismatches_total") > 0);
  // No reading was mistaken for an out-of-band clear (what a foreign, lower
  // value read at a stale LID looks like).
  for (const auto& [key, v] : before) {
    if (key.rfind("infiniband_exporter_counters_reset_externally_total", 0) != 0) continue;
    INFO(key);
    CHECK(value(after, key) == v);
  }
  std::lock_guard lock(mu);
  CHECK(scrapes > 10);
  // The first few say what went wrong; the rest repeat it scrape after scrape.
  for (std::size_t i = 0; i < violations.size() && i < 30; ++i) UNSCOPED_INFO(violations[i]);
  INFO(violations.size() << " violations");
  CHECK(violations.empty());
  CHECK(daemon.process().running());
}

// The check itself on a steady fabric: the MAD worker has its Subnet
// Management agent, every NodeInfo SMP is answered (no timeout, no error)
// and names the node it was sent for (no mismatch), and what the daemon
// exports agrees with smpquery, the oracle, at every LID.
TEST_CASE("The sweep's NodeInfo LID check is answered at every LID", "[lid][integration]") {
  FatTreeSpec spec;
  spec.servers = 2;
  spec.rails = 2;
  spec.radix = 8;
  const Fabric fabric = make_fat_tree(spec);
  SimFabric sim(fabric);
  Daemon daemon(sim, {"--sweep.interval=300ms", config_flag(sim, kRawWaitYaml)});
  REQUIRE(daemon.wait_ready());
  CHECK(daemon.process().read_stderr().find("sweep LID check on") != std::string::npos);
  REQUIRE(
      eventually([&] { return value(daemon.series(), "infiniband_exporter_sweeps_total") >= 4; },
                 std::chrono::seconds(20)));
  const Series s = daemon.series();
  CHECK(value(s, "infiniband_exporter_mad_requests_total{result=\"ok\"}") > 0);
  CHECK(value(s, "infiniband_exporter_mad_requests_total{result=\"timeout\"}") == 0);
  CHECK(value(s, "infiniband_exporter_mad_requests_total{result=\"error\"}") == 0);
  CHECK(value(s, "infiniband_exporter_lid_mismatches_total") == 0);
  CHECK(value(s, "infiniband_exporter_nodes_not_answering") == 0);
  const std::regex guid_re("\\nGuid:\\.+(0x[0-9a-f]+)");
  for (const auto& node : fabric.nodes()) {
    INFO(node.name);
    const int lid = exported_lid(s, node.name);
    REQUIRE(lid > 0);
    const auto r = sim.run({"smpquery", "nodeinfo", std::to_string(lid)});
    INFO(r.err);
    REQUIRE(r.ok());
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, guid_re));
    CHECK(std::stoull(m[1].str(), nullptr, 16) == std::stoull(guid_of(s, node.name), nullptr, 16));
  }
  CHECK(daemon.process().running());
}
