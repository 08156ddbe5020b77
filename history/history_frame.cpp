#include "history/history_frame.h"

#include <algorithm>
#include <cmath>

namespace ibfx {

std::uint16_t quantize_ratio(double ratio) {
  if (!std::isfinite(ratio)) return kHistoryNoRatio;
  return static_cast<std::uint16_t>(std::lround(std::clamp(ratio, 0.0, 1.0) * kHistoryRatioScale));
}

double ratio_value(std::uint16_t quantized) {
  if (quantized == kHistoryNoRatio) return std::nan("");
  return quantized / kHistoryRatioScale;
}

std::size_t HistoryFrame::bytes() const {
  std::size_t n = sizeof(HistoryFrame) + cells.capacity() * sizeof(HistoryCell);
  for (const HistoryRoot& r : roots) {
    n += sizeof(HistoryRoot) + r.name.capacity() + r.remote_name.capacity() + r.cause.capacity();
    for (const std::string& j : r.jobs) n += sizeof(std::string) + j.capacity();
  }
  for (const HistoryJob& j : jobs) {
    n += sizeof(HistoryJob) + j.name.capacity() + j.user.capacity() +
         j.switches.capacity() * sizeof(std::uint32_t);
  }
  for (const HistoryLink& l : links) {
    n +=
        sizeof(HistoryLink) + l.name.capacity() + l.remote_name.capacity() + l.condition.capacity();
    for (const std::string& j : l.jobs) n += sizeof(std::string) + j.capacity();
  }
  return n;
}

HistoryFramePtr HistoryFrames::at(double time) const {
  const auto it = std::upper_bound(frames.begin(), frames.end(), time,
                                   [](double t, const HistoryFramePtr& f) { return t < f->time; });
  if (it == frames.begin()) return nullptr;
  return *std::prev(it);
}

}  // namespace ibfx
