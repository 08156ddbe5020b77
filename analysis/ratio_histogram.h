// Cumulative histogram of a per-port ratio in [0, 1] (stall ratio W,
// utilisation U), kept per (tier, rail): one observation per port per sweep,
// so heatmaps and histogram_quantile work over any range.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ibfx {

template <const auto& Bounds>
struct RatioHistogram {
  static constexpr const auto& kBounds = Bounds;
  std::array<std::uint64_t, Bounds.size()> buckets{};  // non-cumulative per bucket
  std::uint64_t count = 0;
  double sum = 0;
  void observe(double v) {
    for (std::size_t b = 0; b < kBounds.size(); ++b) {
      if (v <= kBounds[b]) {
        ++buckets[b];
        break;
      }
    }
    ++count;
    sum += v;
  }
};

inline constexpr std::array<double, 11> kStallBounds{0.001, 0.005, 0.01, 0.02, 0.05, 0.1,
                                                     0.2,   0.3,   0.5,  0.75, 1.0};
// Finer near 1, where "busy" turns into "full".
inline constexpr std::array<double, 12> kUtilizationBounds{0.01, 0.05, 0.1, 0.2,  0.3,  0.5,
                                                           0.7,  0.8,  0.9, 0.95, 0.98, 1.0};
using StallHistogram = RatioHistogram<kStallBounds>;
using UtilizationHistogram = RatioHistogram<kUtilizationBounds>;

}  // namespace ibfx
