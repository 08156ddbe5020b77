// Link health on ibsim (issue #34, docs/links.md): every kind of cable fault
// of the issue's list injected at once, each on a cable of its own, into ONE
// simulated fabric swept every second by ONE daemon (CI time: every
// integration test also runs under ASan and TSan). What must hold: each
// fault is found on its cable and, for a one-direction condition, in the
// right direction (node_* is the end whose receiver sees the errors); a BER
// of 1e-10 or worse is reported within two sweeps; the untouched cables,
// the remote physical errors, the stray error and the rebooted host show
// nothing, at any sweep.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "link_status.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;
using nlohmann::json;

namespace {

// 4xHDR, the net file's link type: 4 lanes x 50 Gb/s (the BER's denominator).
constexpr double kLineBits = 200e9;

// A cable, `node`[port] first: for a one-direction fault, the end whose
// receiver counts the errors.
struct Cable {
  std::string node;
  int port = 0;
  std::string remote;
  int remote_port = 0;

  bool is(const json& link) const {
    auto end = [&](const char* name, const char* port_key, const std::string& n, int p) {
      return link[name] == n && link[port_key] == p;
    };
    return (end("node_name", "port", node, port) &&
            end("remote_node_name", "remote_port", remote, remote_port)) ||
           (end("node_name", "port", remote, remote_port) &&
            end("remote_node_name", "remote_port", node, port));
  }
  // The receiving end is node_*.
  bool directed(const json& link) const {
    return link["node_name"] == node && link["port"] == port;
  }
  std::string text() const {
    return node + "[" + std::to_string(port) + "] <- " + remote + "[" +
           std::to_string(remote_port) + "]";
  }
};

const json* find(const json& status, const Cable& c) {
  for (const json& l : status["links"]) {
    if (c.is(l)) return &l;
  }
  return nullptr;
}

// The cables of the fabric make_fat_tree({servers 8, rails 2, radix 8})
// builds (4 leaves, 4 spines, 16 GPU HCAs, mgmt01 on spine-01[5]), one per
// fault; the 13 cables not named here stay untouched.
const Cable kHeavy{"spine-01", 1, "leaf-r0-01", 5};       // 1e-9 from the first sweep
const Cable kTenTen{"leaf-r0-02", 6, "spine-02", 2};      // 1e-10 from t = 2 s
const Cable kWarning{"spine-03", 3, "leaf-r1-01", 7};     // 3 errors, late
const Cable kStray{"leaf-r1-02", 5, "spine-01", 4};       // 1 error
const Cable kIntegrity{"spine-04", 1, "leaf-r0-01", 8};   // LocalLinkIntegrityErrors
const Cable kOverrun{"leaf-r1-01", 6, "spine-02", 3};     // ExcessiveBufferOverrunErrors
const Cable kRecovery{"leaf-r0-01", 7, "spine-03", 1};    // LinkErrorRecoveryCounter
const Cable kSaturated{"spine-02", 4, "leaf-r1-02", 6};   // SymbolErrorCounter at 65535
const Cable kRemotePhys{"leaf-r0-02", 7, "spine-03", 2};  // PortRcvRemotePhysicalErrors
const Cable kFlapping{"gpu0002 mlx5_0", 1, "leaf-r0-01", 2};
const Cable kReboot{"gpu0003 mlx5_1", 1, "leaf-r1-01", 3};
const Cable kDown{"gpu0006 mlx5_1", 1, "leaf-r1-02", 2};
const Cable kNarrow{"gpu0007 mlx5_0", 1, "leaf-r0-02", 3};  // trained 1x

// The net file with kNarrow's two ends annotated 1xHDR: ibsim trains that
// cable at one lane (PortInfo LinkWidthActive 1), its peers at four.
std::string netfile_with_narrow_link(const Fabric& fabric) {
  std::string net = fabric.to_netfile();
  for (const std::string& end : {"\"" + kNarrow.node + "\"[1]\t# lid 0 4xHDR",
                                 "\"" + kNarrow.remote + "\"[3]\t# lid 0 4xHDR"}) {
    const auto at = net.find(end);
    REQUIRE(at != std::string::npos);
    net.replace(at + end.size() - 5, 1, "1");
  }
  return net;
}

// A timeline played against wall time, one step every 250 ms: the actions
// due, the symbol errors that tick at a rate, then a look at /status.json.
class Timeline {
 public:
  explicit Timeline(SimFabric& sim) : sim_(sim) {}
  void at(double t, std::function<void()> action) { actions_.push_back({t, std::move(action)}); }
  // SymbolErrorCounter of node[port] rises by `per_second` from `start` on
  // (PerformanceSet sets absolute values: from `base`).
  void tick(const std::string& node, int port, double per_second, double start,
            std::uint64_t base = 0) {
    ticking_.push_back({node, port, per_second, start, base, base});
  }
  double now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
  }
  // Unix seconds of timeline time `t`, to compare with sweep timestamps.
  double unix_at(double t) const { return unix_began_ + t; }
  // Steps until `until` (timeline seconds), calling `look` after each step.
  void play(double until, const std::function<void()>& look) {
    while (now() < until) {
      const auto step_start = std::chrono::steady_clock::now();
      const double t = now();
      for (auto& a : actions_) {
        if (a.done || t < a.t) continue;
        a.action();
        a.done = true;
      }
      for (auto& k : ticking_) {
        if (t < k.start) continue;
        const auto value = k.base + static_cast<std::uint64_t>(k.per_second * (t - k.start));
        if (value == k.sent) continue;
        sim_.perf_set(k.node, k.port, "PortCounters.SymbolErrorCounter", value);
        k.sent = value;
      }
      look();
      std::this_thread::sleep_until(step_start + std::chrono::milliseconds(250));
    }
  }

 private:
  struct Action {
    double t;
    std::function<void()> action;
    bool done = false;
  };
  struct Ticking {
    std::string node;
    int port;
    double per_second, start;
    std::uint64_t base, sent;
  };
  SimFabric& sim_;
  std::vector<Action> actions_;
  std::vector<Ticking> ticking_;
  std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
  double unix_began_ =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
};

// The daemon's configuration: a sweep every second, a discovery every 2 s
// (port states follow the unlinks), and the BER bands opened for a test
// that lasts seconds, not the 12 minutes of the long window: over a window
// the daemon has watched for W < 60 s, the short and the long BER are the
// same number, so the long error threshold is set to the short one (the
// default 1e-14 makes any 3 errors an error) and the warning band lies
// under it. The short window keeps its defaults: 60 s, 1e-12, 3 errors.
std::string link_config(SimFabric& sim) {
  return "--config.file=" + ConfigYaml()
                                .sweep_interval("1s")
                                .set("discovery.interval", "2s")
                                .set("links.ber_error_long", "1e-12")
                                .set("links.ber_warning", "1e-13")
                                .set("links.ber_clear", "1e-14")
                                .write(sim.dir() + "/exporter.yaml");
}

}  // namespace

TEST_CASE(
    "Link health on ibsim: every cable fault found on its cable and direction and nothing else",
    "[links][integration]") {
  const Fabric fabric = make_fat_tree({.servers = 8, .rails = 2, .tiers = 2, .radix = 8});
  SimFabric sim(netfile_with_narrow_link(fabric));
  // History from before the daemon: the rebooting host's counters are not
  // zero (a reboot must bring them back to zero), the saturating counter
  // starts at 1,000.
  sim.perf_set(kReboot.node, 1, "PortCounters.SymbolErrorCounter", 7);
  sim.perf_set(kReboot.node, 1, "PortCounters.LinkDownedCounter", 2);
  sim.perf_set(kReboot.node, 1, "PortCounters.LinkErrorRecoveryCounter", 1);
  sim.perf_set(kSaturated.node, kSaturated.port, "PortCounters.SymbolErrorCounter", 1000);
  Daemon daemon(sim, {link_config(sim)});
  REQUIRE(daemon.wait_ready());

  Timeline timeline(sim);
  // Both ends of a cable going down count it in LinkDownedCounter, as
  // hardware does (ibsim's Unlink does not).
  auto link_down = [&](const Cable& c, std::uint64_t downs_node, std::uint64_t downs_remote) {
    sim.unlink(c.node, c.port);
    sim.perf_set(c.node, c.port, "PortCounters.LinkDownedCounter", downs_node);
    sim.perf_set(c.remote, c.remote_port, "PortCounters.LinkDownedCounter", downs_remote);
  };
  // 1e-9 at 4xHDR (200 errors a second) from the start, and 1e-10 (20) from 2 s.
  timeline.tick(kHeavy.node, kHeavy.port, 1e-9 * kLineBits, 0);
  timeline.tick(kTenTen.node, kTenTen.port, 1e-10 * kLineBits, 2);
  timeline.at(2, [&] {
    sim.perf_set(kStray.node, kStray.port, "PortCounters.SymbolErrorCounter", 1);
    sim.perf_set(kIntegrity.node, kIntegrity.port, "PortCounters.LocalLinkIntegrityErrors", 1);
    sim.perf_set(kOverrun.node, kOverrun.port, "PortCounters.ExcessiveBufferOverrunErrors", 1);
    sim.perf_set(kRecovery.node, kRecovery.port, "PortCounters.LinkErrorRecoveryCounter", 3);
    sim.perf_set(kSaturated.node, kSaturated.port, "PortCounters.SymbolErrorCounter", 65535);
    // A packet marked bad upstream: not this cable's fault.
    sim.perf_set(kRemotePhys.node, kRemotePhys.port, "PortCounters.PortRcvRemotePhysicalErrors",
                 50);
    link_down(kDown, 1, 1);
    link_down(kFlapping, 1, 1);
    // The host reboots: its HCA's counters are zero when it comes back; the
    // switch end counts the link going down.
    sim.unlink(kReboot.node, kReboot.port);
    for (const char* counter :
         {"SymbolErrorCounter", "LinkDownedCounter", "LinkErrorRecoveryCounter"}) {
      sim.perf_set(kReboot.node, kReboot.port, std::string("PortCounters.") + counter, 0);
    }
    sim.perf_set(kReboot.remote, kReboot.remote_port, "PortCounters.LinkDownedCounter", 1);
  });
  timeline.at(4, [&] { sim.relink(kFlapping.node, kFlapping.port); });
  timeline.at(5, [&] { sim.relink(kReboot.node, kReboot.port); });
  timeline.at(7, [&] { link_down(kFlapping, 2, 2); });
  timeline.at(9, [&] { sim.relink(kFlapping.node, kFlapping.port); });
  // The same host reboots again: two downs at the switch end only, which
  // is no flapping (UFM counts a down only when both ends' LinkDowned moved).
  timeline.at(10, [&] {
    sim.unlink(kReboot.node, kReboot.port);
    sim.perf_set(kReboot.remote, kReboot.remote_port, "PortCounters.LinkDownedCounter", 2);
  });
  timeline.at(13, [&] { sim.relink(kReboot.node, kReboot.port); });
  // Three errors once the daemon has watched the port for over 20 s: a BER
  // of 3 / (2e11 b/s x 20 s) = 7.5e-13 at most, in the warning band
  // [1e-13, 1e-12) until 150 s.
  timeline.at(22, [&] {
    sim.perf_set(kWarning.node, kWarning.port, "PortCounters.SymbolErrorCounter", 3);
  });

  // What every look at /status.json found.
  const std::vector<const Cable*> faulted = {&kHeavy,   &kTenTen,   &kWarning,   &kIntegrity,
                                             &kOverrun, &kRecovery, &kSaturated, &kFlapping,
                                             &kDown,    &kNarrow,   &kReboot};
  std::set<std::string> unexpected;         // rows on cables no fault was injected into
  std::set<std::string> reboot_conditions;  // every condition the rebooted host's cable had
  std::set<double> sweeps;                  // sweep timestamps seen
  std::map<const Cable*, double> found_at;  // first sweep timestamp with its condition
  json last;
  auto first_seen = [&](const Cable* c, bool found, double sweep) {
    if (found && !found_at.contains(c)) found_at[c] = sweep;
  };
  auto look = [&] {
    last = status_json(daemon);
    const double sweep = last["sweep"]["timestamp_seconds"].get<double>();
    sweeps.insert(sweep);
    for (const json& l : last["links"]) {
      bool known = false;
      for (const Cable* c : faulted) known = known || c->is(l);
      if (!known) unexpected.insert(link_row(l));
      if (kReboot.is(l)) {
        for (const json& c : l["conditions"]) reboot_conditions.insert(c.get<std::string>());
      }
    }
    const json* heavy = find(last, kHeavy);
    first_seen(&kHeavy,
               heavy != nullptr && (*heavy)["condition"] == "ber_error" &&
                   (*heavy)["symbol_ber"].is_number() &&
                   (*heavy)["symbol_ber"].get<double>() >= 1e-10,
               sweep);
    const json* ten = find(last, kTenTen);
    first_seen(&kTenTen, ten != nullptr && (*ten)["condition"] == "ber_error", sweep);
    const json* down = find(last, kDown);
    first_seen(&kDown, down != nullptr && (*down)["condition"] == "down", sweep);
  };
  // Sweeps whose timestamp is after timeline time `from`, up to `to` (a
  // sweep timestamp) included.
  auto sweeps_between = [&](double from, double to) {
    std::size_t n = 0;
    for (double s : sweeps) n += s > timeline.unix_at(from) && s <= to ? 1 : 0;
    return n;
  };

  timeline.play(24, look);
  // Then until every fault shows as it should (the relinked HCA ports wait
  // for the subnet manager to make them Active again), or 20 s more.
  auto settled = [&] {
    auto has = [&](const Cable& c, const char* condition) {
      const json* l = find(last, c);
      return l != nullptr && (*l)["condition"] == condition;
    };
    return has(kHeavy, "ber_error") && has(kTenTen, "ber_error") && has(kWarning, "ber_warning") &&
           has(kIntegrity, "link_errors") && has(kOverrun, "link_errors") &&
           has(kRecovery, "link_errors") && has(kSaturated, "ber_error") &&
           has(kFlapping, "flapping") && has(kDown, "down") && has(kNarrow, "degraded") &&
           find(last, kReboot) == nullptr && last["links"].size() == 10;
  };
  while (!settled() && timeline.now() < 60) timeline.play(timeline.now() + 1, look);
  INFO("links at the end:\n" << link_rows(last));
  INFO("after " << timeline.now() << " s of the timeline");
  CHECK(settled());

  // Nothing on a cable no fault was injected into, at any sweep: not the
  // remote physical errors, not the stray error, not an untouched cable.
  CHECK(unexpected.empty());
  for (const std::string& row : unexpected) UNSCOPED_INFO("unexpected: " << row);
  // The rebooted host: its cable was down while it rebooted, never anything
  // else (counters back at zero are a restart: no errors, no downs).
  CHECK(reboot_conditions == std::set<std::string>{"down"});

  // A BER of 1e-10 or worse reported within two sweeps.
  REQUIRE(found_at.contains(&kHeavy));
  CHECK(sweeps_between(0, found_at[&kHeavy]) <= 2);
  REQUIRE(found_at.contains(&kTenTen));
  CHECK(sweeps_between(2, found_at[&kTenTen]) <= 2);
  // Down within two sweeps of the unlink (LinkDowned moved at both ends).
  REQUIRE(found_at.contains(&kDown));
  CHECK(sweeps_between(2, found_at[&kDown]) <= 2);

  // Direction: the end whose receiver counts the errors is node_*.
  for (const Cable* c :
       {&kHeavy, &kTenTen, &kWarning, &kIntegrity, &kOverrun, &kRecovery, &kSaturated}) {
    const json* l = find(last, *c);
    REQUIRE(l != nullptr);
    INFO(c->text() << ": " << l->dump());
    CHECK(c->directed(*l));
  }
  const json& heavy = *find(last, kHeavy);
  CHECK(heavy["symbol_ber"].get<double>() >= 1e-10);
  CHECK(heavy["symbol_ber"].get<double>() <= 2e-9);
  CHECK(heavy["remote_symbol_ber"].is_null());  // the other direction is clean
  CHECK(heavy["symbol_ber_at_least"] == false);
  const json& warning = *find(last, kWarning);
  CHECK(warning["symbol_ber"].get<double>() >= 1e-13);
  CHECK(warning["symbol_ber"].get<double>() < 1e-12);
  // The saturated 16-bit counter: its BER is a lower bound.
  const json& saturated = *find(last, kSaturated);
  CHECK(saturated["symbol_ber_at_least"] == true);
  CHECK(saturated["symbol_ber"].get<double>() >= 1e-10);
  // Integrity and overrun errors without symbol errors: no BER.
  CHECK((*find(last, kIntegrity))["symbol_ber"].is_null());
  // Flapping: both ends' LinkDowned moved twice.
  CHECK((*find(last, kFlapping))["downs_last_hour"].get<int>() >= 2);
  // The link that stays down stays listed with the far end it had, named.
  const json& down = *find(last, kDown);
  CHECK(down["remote_node_name"].is_string());
  CHECK(down["node_name"].is_string());
  // The 1x cable, from either end: degraded at the width it trained at.
  const json& narrow = *find(last, kNarrow);
  CHECK(narrow["link_width"] == "1x");

  // /metrics says the same: one infiniband_link_unhealthy per unhealthy link,
  // keyed by the receiving end; a BER only for ports whose receiver erred.
  const Series s = daemon.series();
  CHECK(count_family(s, "infiniband_link_unhealthy") == 10);
  for (const Cable* c : {&kHeavy, &kWarning, &kOverrun, &kSaturated}) {
    const json* l = find(last, *c);
    REQUIRE(l != nullptr);
    const std::string key = "infiniband_link_unhealthy{node_guid=\"" + guid_of(s, c->node) +
                            "\",port=\"" + std::to_string(c->port) + "\",remote_node_guid=\"" +
                            guid_of(s, c->remote) + "\",remote_port=\"" +
                            std::to_string(c->remote_port) + "\",condition=\"" +
                            (*l)["condition"].get<std::string>() + "\"}";
    INFO(key);
    CHECK(s.count(key) == 1);
  }
  auto ber_of = [&](const std::string& node, int port) {
    return s.count("infiniband_port_symbol_ber" + port_labels(guid_of(s, node), node, "", port) +
                   "}");
  };
  CHECK(ber_of(kHeavy.node, kHeavy.port) == 1);
  CHECK(ber_of(kHeavy.remote, kHeavy.remote_port) == 0);
  CHECK(ber_of(kStray.node, kStray.port) == 1);  // its BER is still shown
  CHECK(ber_of(kRemotePhys.node, kRemotePhys.port) == 0);
  CHECK(ber_of(kReboot.node, kReboot.port) == 0);
  // The daemon read the rebooted host's counters back at zero (the restart
  // was seen, not missed), and the flapping host's after each flap.
  CHECK(s.at(R"(infiniband_exporter_counters_reset_externally_total{counter="symbol_errors"})") >=
        1);
  // One event per link and condition, never one per sweep.
  CHECK(s.at(R"(infiniband_link_events_total{condition="ber_error"})") == 3);
  CHECK(s.at(R"(infiniband_link_events_total{condition="ber_warning"})") == 1);
  CHECK(s.at(R"(infiniband_link_events_total{condition="link_errors"})") == 3);
  CHECK(s.at(R"(infiniband_link_events_total{condition="flapping"})") == 1);
  CHECK(s.at(R"(infiniband_link_events_total{condition="degraded"})") == 1);
  CHECK(s.at(R"(infiniband_link_events_total{condition="down"})") >= 1);

  // /events: link events next to the congestion ones, both ends named.
  const json events = json::parse(http_get(daemon.port(), "/events").body);
  std::map<std::string, const json*> link_events;
  int down_events = 0;  // of the link that stays down: one, not one per discovery
  for (const json& e : events["events"]) {
    if (e["kind"] != "link") continue;
    down_events += kDown.is(e) && e["condition"] == "down" ? 1 : 0;
    for (const Cable* c : {&kHeavy, &kFlapping}) {
      if (c->is(e)) link_events[e["condition"].get<std::string>()] = &e;
    }
  }
  INFO(events.dump(1));
  CHECK(down_events == 1);
  REQUIRE(link_events.contains("ber_error"));
  CHECK((*link_events["ber_error"])["state"] == "active");
  CHECK((*link_events["ber_error"])["peak_ber"].get<double>() >= 1e-10);
  REQUIRE(link_events.contains("flapping"));
  CHECK((*link_events["flapping"])["downs"].get<int>() >= 2);

  // /top's LINKS table: the saturated counter's BER as a lower bound.
  const std::string top = http_get(daemon.port(), "/top").body;
  INFO(top);
  const auto links_table = top.find("LINKS (unhealthy cables");
  REQUIRE(links_table != std::string::npos);
  CHECK(top.find(">", links_table) != std::string::npos);

  // A restart keeps the link events, like the congestion events: saved on
  // SIGTERM in the state directory, served by the next daemon before its
  // first sweep under the same ids, and continued while the link still has
  // the condition (the heavy cable keeps erring).
  const auto ber_id = (*link_events["ber_error"])["id"].get<std::uint64_t>();
  const auto flapping_id = (*link_events["flapping"])["id"].get<std::uint64_t>();
  const double ber_start = (*link_events["ber_error"])["start"].get<double>();
  REQUIRE(daemon.process().terminate(std::chrono::seconds(10)) == 0);
  Daemon again(sim, {link_config(sim)});
  auto event_by_id = [&](std::uint64_t id) {
    const HttpReply r = http_get(again.port(), "/events");
    REQUIRE(r.status == 200);
    const json all = json::parse(r.body);
    for (const json& e : all["events"]) {
      if (e["kind"] == "link" && e["id"] == id) return e;
    }
    return json();
  };
  const json restored = event_by_id(ber_id);
  INFO(restored.dump());
  REQUIRE(restored.is_object());
  CHECK(restored["start"] == ber_start);
  CHECK(event_by_id(flapping_id)["condition"] == "flapping");
  REQUIRE(again.wait_ready());
  // The new daemon's BER window fills again within a few sweeps (the heavy
  // cable still errs); up to 20 s for a slow (sanitized) build.
  json continued;
  const double restarted = timeline.now();
  do {
    timeline.play(timeline.now() + 1, [] {});
    continued = event_by_id(ber_id);
  } while (continued["last_seen"] == restored["last_seen"] && timeline.now() < restarted + 20);
  INFO(continued.dump());
  CHECK(continued["state"] == "active");
  CHECK(continued["start"] == ber_start);
  CHECK(continued["last_seen"].get<double>() > restored["last_seen"].get<double>());
}
