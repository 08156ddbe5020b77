#include "views/history_sparkline.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "views/status_page_frame.h"
#include "views/web_escape.h"

namespace ibfx {
namespace {

constexpr int kWidth = 80;
constexpr int kHeight = 16;

}  // namespace

void append_score_sparkline(std::string& out, const HistoryFrames& history, std::uint64_t guid,
                            std::string_view name, int port, double from, double to) {
  if (!(to > from)) return;
  const double step = (to - from) / kSparkPoints;
  std::vector<double> score(kSparkPoints, 0);
  std::vector<bool> seen(kSparkPoints, false);
  double peak = 0;
  double peak_at = 0;
  const auto begin =
      std::lower_bound(history.frames.begin(), history.frames.end(), from,
                       [](const HistoryFramePtr& f, double t) { return f->time + f->span < t; });
  for (auto it = begin; it != history.frames.end() && (*it)->time <= to; ++it) {
    const HistoryFrame& f = **it;
    const int k = std::clamp(static_cast<int>((f.time - from) / step), 0, kSparkPoints - 1);
    seen[static_cast<std::size_t>(k)] = true;
    for (const PageRoot& r : f.roots) {
      if (r.port != port || (guid != 0 ? r.guid != guid : r.name != name)) continue;
      double& s = score[static_cast<std::size_t>(k)];
      s = std::max(s, r.score);
      if (r.score > peak) {
        peak = r.score;
        peak_at = f.time;
      }
    }
  }
  append_sparkline(out, score, seen,
                   peak > 0 ? "score over time, peak " + fixed(peak, 2) + " at " + utc_time(peak_at)
                            : std::string("no score in the history"));
}

void append_sparkline(std::string& out, const std::vector<double>& values,
                      const std::vector<bool>& seen, std::string_view title) {
  if (std::none_of(seen.begin(), seen.end(), [](bool b) { return b; })) return;
  const double top = std::max(*std::max_element(values.begin(), values.end()), 1e-9);
  const auto n = static_cast<double>(values.size());
  out += "<svg class=\"spark\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
         std::to_string(kHeight) + "\"><title>";
  append_html(out, title);
  out += "</title><polyline points=\"";
  for (std::size_t k = 0; k < values.size() && k < seen.size(); ++k) {
    if (!seen[k]) continue;
    const double x = (static_cast<double>(k) + 0.5) * kWidth / n;
    const double y = kHeight - 1 - values[k] / top * (kHeight - 2);
    out += fixed(x, 1) + "," + fixed(y, 1) + " ";
  }
  out += "\"/></svg>";
}

}  // namespace ibfx
