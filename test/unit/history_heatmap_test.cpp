// The heatmap over time: one row per switch on a small fabric, a row per
// rail and tier on a large one, hot columns where the history was hot and
// not elsewhere, each column a link to the page as it was, names escaped.
#include "views/history_heatmap.h"

#include <catch2/catch.hpp>

#include "test/support/status_support.h"
#include "views/history_capture.h"
#include "views/status_page_frame.h"

namespace ibfx {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the heatmap over time is hot where the history was, per switch", "[history]") {
  const test::StatusFixture fx = test::status_fixture();
  StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(m.switches.size() == 9);
  m.switches[m.rows[1].switches[0]].name = "<b>\"x\"</b>";  // a rail-1 leaf
  // Quiet for 20 minutes, then the fixture's incast for 10, then quiet.
  StatusModel quiet = m;
  for (StatusSwitch& s : quiet.switches) s.stall = 0;
  quiet.roots.clear();
  for (StatusSwitch& s : quiet.switches) s.root = false;
  auto history = std::make_shared<HistoryFrames>();
  const double t0 = 1764720000;  // a multiple of 60
  for (int k = 0; k < 60; ++k) {
    StatusModel& src = (k >= 20 && k < 30) ? m : quiet;
    src.sweep.timestamp_seconds = t0 + 60 * k;
    history->frames.push_back(make_history_frame(
        src, *fx.snapshot, history->frames.empty() ? nullptr : history->frames.back()->table));
  }
  m.history = history;
  std::string out;
  append_history_heatmap(out, m);
  CHECK(out.find("<h2 id=\"history\">Heatmap of pain over time</h2>") != std::string::npos);
  // A row per switch (9 switches: below kHistorySwitchRows), 60 columns.
  CHECK(count_of(out, "<rect ") == 9 * 60);
  CHECK(count_of(out, "<a href=\"/?at=") == 60);
  // The spines of rail 0 were at W 0.5 from minute 20 to 29, and only then.
  CHECK(count_of(out, "spine-r0-0 port") == 60);
  CHECK(count_of(out, ", W 0.500") >= 10);
  const std::string hot = stall_colour(0.5);
  std::size_t hot_switches = 0;
  for (const StatusSwitch& s : m.switches) hot_switches += stall_colour(s.stall) == hot ? 1 : 0;
  REQUIRE(hot_switches > 0);
  // Hot in the 10 minutes of the incast, in no other column.
  CHECK(count_of(out, "fill=\"" + hot + "\"") == 10 * hot_switches);
  // The root's leaf, outlined in the 10 minutes it held the root.
  CHECK(count_of(out, ", root of congestion</title>") == 10);
  CHECK(count_of(out, "class=\"r\"") == 10);
  // A hostile name is escaped in its row label and tooltips.
  CHECK(out.find("<b>\"x\"") == std::string::npos);
  CHECK(out.find("&lt;b&gt;") != std::string::npos);
  // Window links.
  CHECK(out.find("href=\"/?window=24h\"") != std::string::npos);
}

TEST_CASE("over five minutes the heatmap's columns are 5 s and say their seconds", "[history]") {
  const test::StatusFixture fx = test::status_fixture();
  StatusModel m = build_status_model(*fx.snapshot);
  auto history = std::make_shared<HistoryFrames>();
  const double t0 = 1764720000;  // 00:00:00 UTC, a multiple of 300
  for (int k = 0; k < 60; ++k) {
    m.sweep.timestamp_seconds = t0 + 5 * k + 1;
    history->frames.push_back(make_history_frame(
        m, *fx.snapshot, history->frames.empty() ? nullptr : history->frames.back()->table));
  }
  m.history = history;
  m.history_window_seconds = 300;
  std::string out;
  append_history_heatmap(out, m);
  CHECK(out.find("Each column is 5s") != std::string::npos);
  CHECK(count_of(out, "<a href=\"/?at=") == 60);
  // Each column links to its last second and its tooltips name its start.
  CHECK(out.find("<a href=\"/?at=" + std::to_string(static_cast<long long>(t0) + 4) + "\">") !=
        std::string::npos);
  CHECK(out.find("<title>00:00:05, ") != std::string::npos);
  CHECK(out.find("<title>00:04:55, ") != std::string::npos);
  CHECK(out.find("href=\"/?window=5m\"") != std::string::npos);
}

TEST_CASE("without history the heatmap over time says so", "[history]") {
  StatusModel m;
  std::string out;
  append_history_heatmap(out, m);
  CHECK(out.find("No history yet") != std::string::npos);
  append_as_of_banner(out, m);
  CHECK(out.find("as-of") == std::string::npos);
}

}  // namespace ibfx
