// Small inline charts of a root's score over time (issue #35), on the root
// and congestion event rows of the status page: is it getting worse, when
// did it start. Drawn from the history the page carries; an SVG polyline of
// at most kSparkPoints points, a few hundred bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history/history_frame.h"

namespace ibfx {

inline constexpr int kSparkPoints = 40;

// A sparkline of `values` (one per step, those not `seen` left out), scaled
// to their maximum, with `title` as its tooltip.
void append_sparkline(std::string& out, const std::vector<double>& values,
                      const std::vector<bool>& seen, std::string_view title);

// The root at port `port` of the node `guid` (0: matched by `name`
// instead, as the events know their root) between `from` and `to`: its
// highest score in each of kSparkPoints steps, 0 where it was no root.
// Appends "<svg class=spark>...</svg>" with a tooltip of its peak, or
// nothing when the history has no frame in the range.
void append_score_sparkline(std::string& out, const HistoryFrames& history, std::uint64_t guid,
                            std::string_view name, int port, double from, double to);

}  // namespace ibfx
