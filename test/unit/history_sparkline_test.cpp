// A root's score over time: one point per step where the history has a
// frame, the peak in the tooltip, nothing without frames in the range.
#include "views/history_sparkline.h"

#include <catch2/catch.hpp>

#include "test/support/history_support.h"

namespace ibfx {

TEST_CASE("a sparkline follows a root's score and names its peak", "[history]") {
  HistoryFrames h;
  for (int k = 0; k < 40; ++k) {
    auto f = test::history_frame(1000 + 10 * k, {0.1});
    if (k >= 10 && k < 20) f->roots = {test::history_root(1, 3, k)};
    h.frames.push_back(f);
  }
  std::string out;
  append_score_sparkline(out, h, 1, "", 3, 1000, 1400);
  CHECK(out.find("<svg class=\"spark\"") == 0);
  CHECK(out.find("peak 19.00 at") != std::string::npos);
  // 40 steps, each with a frame: 40 points; the peak at the top (y 1.0).
  const std::string points = out.substr(out.find("points="));
  CHECK(std::count(points.begin(), points.end(), ',') == 40);
  CHECK(out.find(",1.0 ") != std::string::npos);
  // By name, as the events know their root.
  std::string by_name;
  append_score_sparkline(by_name, h, 0, "sw1", 3, 1000, 1400);
  CHECK(by_name == out);
  std::string none;
  append_score_sparkline(none, h, 1, "", 3, 5000, 6000);
  CHECK(none.empty());
}

}  // namespace ibfx
