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
  const auto jobs_bytes = [](const std::optional<std::vector<std::string>>& list) {
    std::size_t b = 0;
    if (list) {
      for (const std::string& j : *list) b += sizeof(std::string) + j.capacity();
    }
    return b;
  };
  for (const PageRoot& r : roots) {
    n += sizeof(PageRoot) + r.name.capacity() + r.remote.name.capacity() + r.cause.capacity() +
         jobs_bytes(r.jobs);
    for (const std::string& j : r.sending_jobs) n += sizeof(std::string) + j.capacity();
  }
  for (const HistoryJob& j : jobs) {
    n += sizeof(HistoryJob) + j.name.capacity() + j.user.capacity() +
         j.switches.capacity() * sizeof(std::uint32_t);
  }
  for (const PageLink& l : links) {
    n += sizeof(PageLink) + l.node.name.capacity() + l.remote.name.capacity() +
         l.condition.capacity() + jobs_bytes(l.jobs);
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
