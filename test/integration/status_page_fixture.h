// What the status page's browser tests share (status_page_test.cpp for
// the page of now, history_page_test.cpp for its history): a daemon on
// ibsim animated by a scenario, headless Chromium with no network but the
// daemon, and readers of what Chromium logged and fetched.
#pragma once

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon_fixture.h"
#include "shell.h"
#include "test/scenario/scenario.h"
#include "test/support/config_yaml.h"

namespace ibfx::test {

// A scenario of test/scenarios (`file`) with its counters pushed every
// 0.5 s while the daemon sweeps every `interval`; saturated from U = 0.75
// (ibsim's simulated time runs a few percent behind wall time, so rates
// read low: see analysis_test.cpp).
struct BrowserRun {
  BrowserRun(const std::string& file, const std::string& interval)
      : driver(faster(load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/" + file))),
        sim(driver.fabric()),
        daemon(sim, {"--config.file=" + config(sim), "--sweep.interval=" + interval}) {
    REQUIRE(daemon.wait_ready());
  }
  ~BrowserRun() { stop_playing(); }
  BrowserRun(const BrowserRun&) = delete;
  BrowserRun& operator=(const BrowserRun&) = delete;
  static Scenario faster(Scenario s) {
    s.tick = 0.5;
    return s;
  }
  // The daemon's config file; `node_name_map`: a node-name-map file for it
  // (rewritten by a test, then SIGHUP).
  static std::string config(SimFabric& sim, const std::string& node_name_map = "") {
    ConfigYaml c;
    c.scenario_tick().set("scores.saturation_threshold", "0.75");
    if (!node_name_map.empty()) c.set("node_name_map_file", node_name_map);
    return c.write(sim.dir() + "/exporter.yaml");
  }
  void play_until(double t) {
    while (driver.time() < t) {
      const auto start = std::chrono::steady_clock::now();
      step();
      std::this_thread::sleep_until(start + std::chrono::milliseconds(500));
    }
  }
  // One tick's commands to ibsim, noting the wall clock (Unix seconds, the
  // daemon's sweep times) at which its simulated time began.
  void step() {
    const double t = driver.time();
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const std::string& line : driver.step()) sim.console(line);
    const std::lock_guard lock(played_mu);
    played.emplace_back(t, now);
  }
  // The wall clock at which the scenario reached simulated time `t` (its
  // first tick at or after `t`); 0 if not played yet.
  double wall_of(double t) const {
    const std::lock_guard lock(played_mu);
    for (const auto& [sim_time, wall] : played) {
      if (sim_time >= t) return wall;
    }
    return 0;
  }
  // Keeps the traffic flowing on a thread of its own while the browsers
  // look (a fabric without new counts has W 0 and no root); stopped and
  // joined before the daemon and the simulator go, even on a failure.
  void keep_playing() {
    player = std::thread([this] {
      while (!stop.load()) {
        const auto start = std::chrono::steady_clock::now();
        step();
        std::this_thread::sleep_until(start + std::chrono::milliseconds(500));
      }
    });
  }
  void stop_playing() {
    stop = true;
    if (player.joinable()) player.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(daemon.port()) + path;
  }
  ScenarioDriver driver;
  SimFabric sim;
  Daemon daemon;
  std::atomic<bool> stop{false};
  std::thread player;
  mutable std::mutex played_mu;
  std::vector<std::pair<double, double>> played;  // (simulated, wall) per tick
};

// Headless Chromium with its own profile in the test's directory, no
// background traffic, and no name resolving but 127.0.0.1: whatever the
// page tried to fetch from elsewhere would fail and be logged. Killed with
// its process group (timeout(1)) should it hang.
inline Shell chromium(const std::string& dir, const std::string& name, const std::string& args,
                      const std::string& url) {
  return shell("cd '" + dir +
               "' && timeout -k 5 30 chromium --headless --no-sandbox --disable-gpu"
               " --user-data-dir='" +
               dir + "/chromium-profile'" +
               " --disable-background-networking --disable-component-update --disable-sync"
               " --no-first-run --disable-default-apps"
               " '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1'"
               " --enable-logging=stderr --v=0 --log-net-log='" +
               dir + "/" + name + ".netlog' " + args + " '" + url + "' 2>'" + dir + "/" + name +
               ".log'");
}

// The console lines Chromium logged for the page (messages, CSP violations).
inline std::vector<std::string> console_lines(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(":CONSOLE") != std::string::npos ||
        line.find("Content Security Policy") != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

// Every URL the page itself asked for (requests whose initiator is the
// page's origin), from Chromium's net log; the browser's own background
// requests have no origin as initiator.
inline std::vector<std::string> page_requests(const std::string& netlog,
                                              const std::string& origin) {
  std::vector<std::string> out;
  const auto j = nlohmann::json::parse(netlog, nullptr, false);
  if (j.is_discarded() || !j.contains("events")) return {"unreadable net log"};
  for (const auto& e : j["events"]) {
    if (!e.contains("params") || !e["params"].contains("url")) continue;
    const auto& p = e["params"];
    const std::string initiator = p.contains("initiator") && p["initiator"].is_string()
                                      ? p["initiator"].get<std::string>()
                                      : "";
    const std::string u = p["url"].get<std::string>();
    if (initiator == origin || u.rfind(origin, 0) == 0) out.push_back(u);
  }
  return out;
}

// `json_path` against docs/`schema` with python3-jsonschema, the reference
// implementation of JSON Schema in Debian: exit code 0 when valid, else
// the error in out.
inline Shell validate_json(const std::string& json_path, const std::string& schema) {
  return shell(
      "/usr/bin/python3 -c 'import json,sys,jsonschema; "
      "jsonschema.validate(json.load(open(sys.argv[1])),"
      " json.load(open(sys.argv[2])))' '" +
      json_path + "' '" IBFX_SOURCE_DIR "/docs/" + schema + "' 2>&1");
}

// How a root's port cell ends in the roots table: its node's link, the port.
inline std::string root_cell_text(const PortName& p) {
  return ">" + p.node + "</a> port " + std::to_string(p.port) + "</td>";
}

// The text of the first body row of the table with id `id` in `html`.
inline std::string first_row(const std::string& html, const std::string& id) {
  const auto table = html.find("<table id=\"" + id + "\"");
  if (table == std::string::npos) return "";
  const auto body = html.find("<tbody>", table);
  const auto row = html.find("<tr>", body);
  const auto end = html.find("</tr>", row);
  if (body == std::string::npos || row == std::string::npos || end == std::string::npos) return "";
  return html.substr(row, end - row);
}

}  // namespace ibfx::test
