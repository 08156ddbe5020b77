// The status page's history (issue #35) in a real browser: the daemon on
// ibsim under tree_history (an incast from t1 = 2 s to t2 = 16 s, quiet,
// a slow receiver elsewhere from t3 = 32 s), sweeping every second, its
// ?window=5m page (5 s columns) loaded by headless Chromium. The first
// root's cells are outlined and its spines hot in the columns of [t1, t2]
// and in no column outside it; a column's link shows that sweep's roots,
// marked as history; /status.json?at= has /status.json's schema and a time
// before the history is a clear 404; after a restart on the same state
// directory the same cells are on the page; a hostile node name (from a
// node-name-map) stays text; no console message or CSP violation on any of
// these pages.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "status_page_fixture.h"

using namespace ibfx::test;

namespace {

// One cell of the heatmap over time, from its tooltip.
struct TimeCell {
  std::string time;  // "HH:MM:SS"
  int port = 0;
  double stall = -1;  // -1: no data
  bool root = false;
  bool operator==(const TimeCell&) const = default;
};

// A column: the ?at= its link asks for, and its cells by switch name.
using Columns = std::map<long long, std::map<std::string, TimeCell>>;

// The columns of the heatmap over time in a page's DOM (found with find():
// libstdc++'s regex recurses per character on a long match).
Columns history_columns(const std::string& html) {
  Columns out;
  const auto begin = html.find("<svg id=\"history-svg\"");
  const auto end = html.find("</svg>", begin);
  if (begin == std::string::npos || end == std::string::npos) return out;
  const std::string svg = html.substr(begin, end - begin);
  const std::string link = "<a href=\"/?at=";
  const std::regex known(
      R"re(^([0-9:]+), (.*) port ([0-9]+), W ([0-9.]+), U [0-9.a-z]+(, root of congestion)?$)re");
  for (auto a = svg.find(link); a != std::string::npos; a = svg.find(link, a + 1)) {
    const auto quote = svg.find('"', a + link.size());
    const auto close = svg.find("</a>", a);
    if (quote == std::string::npos || close == std::string::npos) break;
    auto& cells = out[std::stoll(svg.substr(a + link.size(), quote - a - link.size()))];
    for (auto t = svg.find("<title>", a); t != std::string::npos && t < close;
         t = svg.find("<title>", t + 1)) {
      const auto t_end = svg.find("</title>", t);
      const std::string text = svg.substr(t + 7, t_end - t - 7);
      TimeCell tc;
      std::smatch m;
      if (std::regex_match(text, m, known)) {
        tc.time = m[1];
        tc.port = std::stoi(m[3]);
        tc.stall = std::stod(m[4]);
        tc.root = m[5].matched;
        cells[m[2]] = tc;
      } else {
        // "HH:MM:SS, name, no data[, root of congestion]"
        const auto comma = text.find(", ");
        tc.time = text.substr(0, comma);
        tc.root = text.find(", root of congestion") != std::string::npos;
        const std::string rest = text.substr(comma + 2);
        cells[rest.substr(0, rest.find(", no data"))] = tc;
      }
    }
  }
  return out;
}

// The column [start, start + 5 s) links to ?at= its last second.
constexpr double kColumn = 5;
double column_start(long long at) { return static_cast<double>(at) + 1 - kColumn; }

}  // namespace

TEST_CASE("The status page history in headless Chromium: heatmap over time and restart",
          "[status_page][history][integration][congestion]") {
  BrowserRun run("tree_history.yaml", "1s");
  const auto trees = run.driver.congestion_trees();
  REQUIRE(trees.size() == 2);
  const CongestionTree& first = trees[0];
  const CongestionTree& second = trees[1];
  REQUIRE(first.root.node == "leaf-r0-01");
  REQUIRE(second.root.node == "leaf-r1-02");
  const std::string dir = run.sim.dir();
  const int port = run.daemon.port();
  const double started =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  // The incast and the start of the quiet: the first tree's columns are
  // complete. The traffic goes on on its own thread from here, and the
  // pages of the first tree are looked at while the quiet lasts.
  run.play_until(20);
  run.keep_playing();
  // The phases on the daemon's clock: a root is named within a few sweeps
  // of its tree (rates over a sweep, the hysteresis holds a root for two
  // more), so columns within `lag` of a phase's edge may go either way.
  // The phases are long enough that each holds a whole column whatever
  // the columns' alignment: [t1 + lag, t2] is 10 s, [t2 + lag, t3 - 1] 11 s.
  const double t1 = run.wall_of(2), t2 = run.wall_of(16);
  constexpr double kLag = 4;
  // A column wholly inside [t1 + lag, t2] (columns start at multiples of
  // their width), by the link its column has: its last second.
  const double hot_start = std::ceil((t1 + kLag) / kColumn) * kColumn;
  REQUIRE(hot_start + kColumn <= t2);
  const auto hot_at = static_cast<long long>(hot_start + kColumn - 1);

  {
    // A column's link: the page as it was at that sweep, marked as history,
    // its roots that sweep's, the first root first; the same in w3m.
    const std::string at = "/?at=" + std::to_string(hot_at);
    const Shell then = chromium(dir, "at", "--dump-dom", run.url(at + "&window=5m"));
    CHECK(then.exit_code == 0);
    CHECK(console_lines(read_file(dir + "/at.log")).empty());
    CHECK(then.out.find("id=\"as-of\"") != std::string::npos);
    CHECK(then.out.find("From the history") != std::string::npos);
    CHECK(first_row(then.out, "roots").find(root_cell_text(first.root)) != std::string::npos);
    // The column asked for is outlined on the heatmap of the page of then.
    CHECK(then.out.find("class=\"at\"") != std::string::npos);
    const Shell text = shell("timeout 20 w3m -dump -cols 200 '" + run.url(at) + "'");
    REQUIRE(text.exit_code == 0);
    INFO(text.out);
    const auto roots = text.out.find("Roots of congestion");
    REQUIRE(roots != std::string::npos);
    CHECK(text.out.find("From the history") < roots);
    CHECK(text.out.find(first.root.node + " port " + std::to_string(first.root.port), roots) !=
          std::string::npos);
    // /status.json?at=: /status.json's schema and keys, that sweep's roots;
    // before the history, a 404 that says how far back it reaches.
    const HttpReply json_then = http_get(port, "/status.json?at=" + std::to_string(hot_at));
    REQUIRE(json_then.status == 200);
    const std::string json_path = dir + "/status-at.json";
    std::ofstream(json_path) << json_then.body;
    const Shell valid = validate_json(json_path, "status.schema.json");
    INFO(valid.out);
    CHECK(valid.exit_code == 0);
    const auto j = nlohmann::json::parse(json_then.body);
    const auto now = nlohmann::json::parse(http_get(port, "/status.json").body);
    for (const auto& [key, value] : now.items()) {
      INFO(key);
      CHECK(j.contains(key));
    }
    REQUIRE(j.contains("as_of"));
    CHECK(j["as_of"]["timestamp_seconds"].get<double>() <= static_cast<double>(hot_at));
    REQUIRE(!j["roots"].empty());
    CHECK(j["roots"][0]["node_name"] == first.root.node);
    CHECK(j["roots"][0]["port"] == first.root.port);
    const auto before = static_cast<long long>(std::floor(started)) - 60;
    const HttpReply too_old = http_get(port, "/status.json?at=" + std::to_string(before));
    CHECK(too_old.status == 404);
    CHECK(too_old.body.find("the status page history reaches back to") != std::string::npos);
  }

  // A hostile node description while the quiet lasts: a node-name-map
  // renames leaf-r1-01 (SIGHUP); the heatmap's row label and tooltips keep
  // it text, in every column (rows take the current names).
  const std::string hostile = "<script>alert(1)</script>";
  const std::string guid = guid_of(run.daemon.series(), "leaf-r1-01");
  REQUIRE(!guid.empty());
  std::ofstream(dir + "/names.map") << guid << " \"" << hostile << "\"\n";
  BrowserRun::config(run.sim, dir + "/names.map");
  REQUIRE(::kill(run.daemon.process().pid(), SIGHUP) == 0);
  REQUIRE(eventually(
      [&] { return http_get(port, "/status.json").body.find("alert(1)") != std::string::npos; }));

  // Until the daemon names the second root (it starts at 32 s).
  nlohmann::json status;
  const bool named = eventually(
      [&] {
        status = nlohmann::json::parse(http_get(port, "/status.json").body);
        return !status["roots"].empty() && status["roots"][0]["node_name"] == second.root.node &&
               status["roots"][0]["port"] == second.root.port;
      },
      std::chrono::seconds(40));
  INFO(status.dump(1));
  REQUIRE(named);
  const double named_at =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Two full columns of the second root at least.
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(2500 * kColumn)));
  const double t3 = run.wall_of(32);
  std::set<std::string> victim_spines;
  for (const PortName& v : first.victims) {
    if (v.node.rfind("spine", 0) == 0) victim_spines.insert(v.node);
  }
  REQUIRE(!victim_spines.empty());

  const double looked =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const Shell page = chromium(dir, "window", "--dump-dom", run.url("/?window=5m"));
  const std::string log = read_file(dir + "/window.log");
  INFO(log.substr(0, 4000));
  REQUIRE(page.exit_code == 0);
  REQUIRE(page.out.find("<h2 id=\"history\">Heatmap of pain over time</h2>") != std::string::npos);
  CHECK(page.out.find("Each column is 5s") != std::string::npos);
  CHECK(console_lines(log).empty());
  CHECK(page.out.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(page.out.find(hostile) == std::string::npos);
  const Columns columns = history_columns(page.out);
  REQUIRE(columns.size() >= 8);
  long long second_at = 0;
  int hot = 0, quiet = 0, second_hot = 0;
  for (const auto& [at, cells] : columns) {
    const double c0 = column_start(at), c1 = c0 + kColumn;
    INFO("column at=" << at << " [" << c0 - started << " s, " << c1 - started
                      << " s) after the start; t1 " << t1 - started << ", t2 " << t2 - started
                      << ", t3 " << t3 - started << ", second root named " << named_at - started
                      << ", page taken " << looked - started);
    // Tooltips give the column's start, to the second.
    for (const auto& [name, cell] : cells) {
      CHECK(cell.time.size() == 8);
    }
    REQUIRE(cells.count(first.root.node) == 1);
    REQUIRE(cells.count(second.root.node) == 1);
    const TimeCell& root1 = cells.at(first.root.node);
    const TimeCell& root2 = cells.at(second.root.node);
    if (c0 >= t1 + kLag && c1 <= t2) {
      // Inside [t1, t2]: the first root's leaf outlined, the spines into
      // it stalled (the scenario's 0.5), on the port into the root's leaf.
      ++hot;
      CHECK(root1.root);
      CHECK_FALSE(root2.root);
      for (const std::string& spine : victim_spines) {
        REQUIRE(cells.count(spine) == 1);
        const TimeCell& s = cells.at(spine);
        INFO(spine << " port " << s.port);
        CHECK(s.stall > 0.25);
        bool victim_port = false;
        for (const PortName& v : first.victims) {
          victim_port = victim_port || (v.node == spine && v.port == s.port);
        }
        CHECK(victim_port);
      }
    } else if (c1 <= t1 - 1 || (c0 >= t2 + kLag && c1 <= t3 - 1)) {
      // Before the incast and in the quiet between the trees: no root and
      // nothing stalled (a second before the next tree: a sweep's counters
      // are read a little after its time).
      quiet += c0 >= t2 ? 1 : 0;
      for (const auto& [name, cell] : cells) {
        INFO(name << " W " << cell.stall);
        CHECK_FALSE(cell.root);
        CHECK(cell.stall < 0.25);
      }
    } else if (c0 >= std::max(t3, named_at) && c1 <= looked - 1) {
      // The second tree once the daemon named it (a slow receiver takes a
      // few sweeps longer than an incast): its root outlined, not the
      // first one's.
      ++second_hot;
      second_at = at;
      CHECK(root2.root);
      CHECK_FALSE(root1.root);
    }
  }
  CHECK(hot >= 1);
  CHECK(columns.count(hot_at) == 1);
  CHECK(quiet >= 1);
  CHECK(second_hot >= 1);

  REQUIRE(second_at > 0);
  const Shell later =
      chromium(dir, "later", "--dump-dom", run.url("/?at=" + std::to_string(second_at)));
  CHECK(console_lines(read_file(dir + "/later.log")).empty());
  CHECK(first_row(later.out, "roots").find(root_cell_text(second.root)) != std::string::npos);

  // Restart on the same state directory: the daemon saves on SIGTERM, the
  // next one shows the same cells for every column before it stopped.
  run.stop_playing();
  REQUIRE(run.daemon.process().terminate(std::chrono::seconds(10)) == 0);
  {
    Daemon again(run.sim,
                 {"--config.file=" + run.sim.dir() + "/exporter.yaml", "--sweep.interval=1s"});
    REQUIRE(again.wait_ready());
    run.daemon = std::move(again);
  }
  const Shell restarted = chromium(dir, "restarted", "--dump-dom", run.url("/?window=5m"));
  CHECK(console_lines(read_file(dir + "/restarted.log")).empty());
  CHECK(restarted.out.find(hostile) == std::string::npos);
  const Columns kept = history_columns(restarted.out);
  int compared = 0;
  for (const auto& [column, cells] : columns) {
    // The columns that were complete when the first page was taken.
    if (column_start(column) + kColumn > looked - 1) continue;
    INFO("column at=" << column);
    REQUIRE(kept.count(column) == 1);
    CHECK(kept.at(column) == cells);
    ++compared;
  }
  CHECK(compared >= 6);
}
