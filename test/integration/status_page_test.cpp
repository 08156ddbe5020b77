// The status page (issue #27) in a real browser: the daemon on ibsim under
// the tree_incast scenario, its page loaded by Debian's headless Chromium
// and by w3m. The root's row comes first, the spine cells' tooltips carry
// the victims' W, the page logs no console error or CSP violation and
// fetches nothing but itself; /status.json validates against
// docs/status.schema.json and has /metrics' sweep time.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "daemon_fixture.h"
#include "shell.h"
#include "test/scenario/scenario.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

namespace {

// tree_incast with its counters pushed every 0.5 s while the daemon sweeps
// every 2 s; saturated from U = 0.75 (ibsim's simulated time runs a few
// percent behind wall time, so rates read low: see analysis_test.cpp).
struct IncastRun {
  IncastRun()
      : driver(faster(
            load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/tree_incast.yaml"))),
        sim(driver.fabric()),
        daemon(sim, {"--config.file=" + config(sim), "--sweep.interval=2s"}) {
    REQUIRE(daemon.wait_ready());
  }
  ~IncastRun() { stop_playing(); }
  IncastRun(const IncastRun&) = delete;
  IncastRun& operator=(const IncastRun&) = delete;
  static Scenario faster(Scenario s) {
    s.tick = 0.5;
    return s;
  }
  static std::string config(SimFabric& sim) {
    return ConfigYaml()
        .scenario_tick()
        .set("scores.saturation_threshold", "0.75")
        .write(sim.dir() + "/exporter.yaml");
  }
  void play_until(double t) {
    while (driver.time() < t) {
      const auto start = std::chrono::steady_clock::now();
      for (const std::string& line : driver.step()) sim.console(line);
      std::this_thread::sleep_until(start + std::chrono::milliseconds(500));
    }
  }
  // Keeps the traffic flowing on a thread of its own while the browsers
  // look (a fabric without new counts has W 0 and no root); stopped and
  // joined before the daemon and the simulator go, even on a failure.
  void keep_playing() {
    player = std::thread([this] {
      while (!stop.load()) {
        const auto start = std::chrono::steady_clock::now();
        for (const std::string& line : driver.step()) sim.console(line);
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
};

// Headless Chromium with its own profile in the test's directory, no
// background traffic, and no name resolving but 127.0.0.1: whatever the
// page tried to fetch from elsewhere would fail and be logged. Killed with
// its process group (timeout(1)) should it hang.
Shell chromium(const std::string& dir, const std::string& name, const std::string& args,
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
std::vector<std::string> console_lines(const std::string& log) {
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
std::vector<std::string> page_requests(const std::string& netlog, const std::string& origin) {
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

// The text of the first body row of the table with id `id` in `html`.
std::string first_row(const std::string& html, const std::string& id) {
  const auto table = html.find("<table id=\"" + id + "\"");
  if (table == std::string::npos) return "";
  const auto body = html.find("<tbody>", table);
  const auto row = html.find("<tr>", body);
  const auto end = html.find("</tr>", row);
  if (body == std::string::npos || row == std::string::npos || end == std::string::npos) return "";
  return html.substr(row, end - row);
}

}  // namespace

TEST_CASE("The status page in headless Chromium and w3m on an incast tree",
          "[status_page][integration][congestion]") {
  IncastRun run;
  const auto trees = run.driver.congestion_trees();
  REQUIRE(trees.size() == 1);
  const CongestionTree& truth = trees[0];
  const std::string dir = run.sim.dir();
  const std::string root_text =
      ">" + truth.root.node + "</a> port " + std::to_string(truth.root.port) + "</td>";

  // Until the daemon names the root on its page (the tree starts at 10 s).
  nlohmann::json status;
  bool named = false;
  for (double t = 12; t <= 30 && !named; t += 2) {
    run.play_until(t);
    status = nlohmann::json::parse(http_get(run.daemon.port(), "/status.json").body);
    named = !status["roots"].empty() && status["roots"][0]["node_name"] == truth.root.node &&
            status["roots"][0]["port"] == truth.root.port;
  }
  INFO(status.dump(1));
  REQUIRE(named);
  run.keep_playing();
  CHECK(status["roots"][0]["cause"] == truth.cause);
  CHECK(status["roots"][0]["remote_node_name"] == "gpu0001 mlx5_0");

  // /status.json against its schema (python3-jsonschema, the reference
  // implementation of JSON Schema in Debian), and its sweep time against
  // /metrics' for the same publication: a JSON, the metrics, the JSON
  // again; equal times on both sides of the scrape are one publication.
  const std::string json_path = dir + "/status.json";
  std::ofstream(json_path) << http_get(run.daemon.port(), "/status.json").body;
  const Shell valid = shell(
      "/usr/bin/python3 -c 'import json,sys,jsonschema; "
      "jsonschema.validate(json.load(open(sys.argv[1])),"
      " json.load(open(sys.argv[2])))' '" +
      json_path + "' '" IBFX_SOURCE_DIR "/docs/status.schema.json' 2>&1");
  INFO(valid.out);
  CHECK(valid.exit_code == 0);
  bool same = false;
  for (int attempt = 0; attempt < 10 && !same; ++attempt) {
    const auto before = nlohmann::json::parse(http_get(run.daemon.port(), "/status.json").body);
    const Series metrics = run.daemon.series();
    const auto after = nlohmann::json::parse(http_get(run.daemon.port(), "/status.json").body);
    const double t = before["sweep"]["timestamp_seconds"];
    if (t != after["sweep"]["timestamp_seconds"].get<double>()) continue;
    same = true;
    CHECK(value(metrics, "infiniband_exporter_last_sweep_timestamp_seconds") ==
          Approx(t).epsilon(1e-12));
  }
  CHECK(same);

  // Chromium: the DOM after the page's script ran.
  const Shell dom = chromium(dir, "dom", "--dump-dom", run.url("/"));
  const std::string log = read_file(dir + "/dom.log");
  INFO(log.substr(0, 4000));
  REQUIRE(dom.exit_code == 0);
  const std::string& html = dom.out;
  REQUIRE(html.find("<h2 id=\"heatmap\">Heatmap of pain</h2>") != std::string::npos);
  // The root's row is the first of the roots table.
  const std::string row = first_row(html, "roots");
  INFO("first root row: " << row);
  CHECK(row.find(root_text) != std::string::npos);
  // "incast", or "incast (held)" in a sweep where the root was kept by the
  // hysteresis (docs/scores.md, "Over sweeps"): a slower run (ASan) shows it.
  CHECK((row.find("<td>" + truth.cause + "</td>") != std::string::npos ||
         row.find("<td>" + truth.cause + " (held)</td>") != std::string::npos));
  // Each spine cell's tooltip names its worst port, the one into the
  // root's leaf (a victim, stalled at W 0.5 by the scenario), with its W.
  std::size_t spine_cells = 0;
  for (const PortName& v : truth.victims) {
    if (v.node.rfind("spine", 0) != 0) continue;
    const std::regex tip("<title>" + v.node + ", port " + std::to_string(v.port) +
                         ", W ([0-9.]+), U [0-9.]+</title>");
    std::smatch m;
    INFO("victim " << v.node << " port " << v.port);
    REQUIRE(std::regex_search(html, m, tip));
    CHECK(std::stod(m[1]) > 0.25);
    CHECK(std::stod(m[1]) < 0.75);
    ++spine_cells;
  }
  CHECK(spine_cells > 0);
  // No console message, no CSP violation, nothing fetched but the page.
  CHECK(console_lines(log).empty());
  const std::string origin = "http://127.0.0.1:" + std::to_string(run.daemon.port());
  const auto requested = page_requests(read_file(dir + "/dom.netlog"), origin);
  CHECK(!requested.empty());
  for (const std::string& u : requested) {
    INFO(u);
    CHECK(u.rfind(origin + "/", 0) == 0);
  }

  // A screenshot, kept as the test's artifact: in $IBFX_TEST_ARTIFACTS, else
  // artifacts/ of the working directory (ctest's: build/<preset>/test), not
  // the simulator's temp dir, which the fixture removes.
  const char* artifacts = std::getenv("IBFX_TEST_ARTIFACTS");
  const std::string shots =
      artifacts != nullptr ? artifacts : (std::filesystem::current_path() / "artifacts").string();
  std::filesystem::create_directories(shots);
  const std::string png = shots + "/status_page.png";
  std::filesystem::remove(png);
  const Shell shot =
      chromium(dir, "shot", "--window-size=1280,1600 --screenshot='" + png + "'", run.url("/"));
  CHECK(shot.exit_code == 0);
  CHECK(std::filesystem::exists(png));
  CHECK(std::filesystem::file_size(png) > 1000);
  std::printf("status page screenshot: %s\n", png.c_str());

  // The switch view of the root's leaf, and w3m's text of the page: the
  // same root, first.
  const Shell leaf = chromium(dir, "leaf", "--dump-dom", run.url("/?node=" + truth.root.node));
  CHECK(leaf.out.find("<h1>" + truth.root.node + "</h1>") != std::string::npos);
  CHECK(console_lines(read_file(dir + "/leaf.log")).empty());
  const Shell text = shell("timeout 20 w3m -dump -cols 200 '" + run.url("/") + "'");
  REQUIRE(text.exit_code == 0);
  INFO(text.out);
  const auto roots = text.out.find("Roots of congestion");
  REQUIRE(roots != std::string::npos);
  const auto first =
      text.out.find(truth.root.node + " port " + std::to_string(truth.root.port), roots);
  CHECK(first != std::string::npos);
  CHECK(text.out.find(truth.cause, first) != std::string::npos);
  CHECK(text.out.find("Hottest ports", roots) > first);
}
