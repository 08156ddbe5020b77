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

#include "status_page_fixture.h"

using namespace ibfx::test;

TEST_CASE("The status page in headless Chromium and w3m on an incast tree",
          "[status_page][integration][congestion]") {
  BrowserRun run("tree_incast.yaml", "2s");
  const auto trees = run.driver.congestion_trees();
  REQUIRE(trees.size() == 1);
  const CongestionTree& truth = trees[0];
  const std::string dir = run.sim.dir();
  const std::string root_text = root_cell_text(truth.root);

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
  const Shell valid = validate_json(json_path, "status.schema.json");
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
