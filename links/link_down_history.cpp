#include "links/link_down_history.h"

#include <algorithm>

namespace ibfx {

void LinkDownHistory::note(double now, std::uint64_t downs) {
  // More than kKept at once: the oldest are dropped, the count saturates.
  for (std::uint64_t i = 0; i < std::min<std::uint64_t>(downs, kKept); ++i) {
    at_[next_] = now;
    next_ = static_cast<std::uint8_t>((next_ + 1) % kKept);
    size_ = static_cast<std::uint8_t>(std::min<std::size_t>(size_ + 1u, kKept));
  }
}

std::uint32_t LinkDownHistory::count(double now, double window_seconds) const {
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < size_; ++i) n += now - at_[i] < window_seconds ? 1 : 0;
  return n;
}

void LinkDownHistory::drop_since(double since) {
  LinkDownHistory kept;
  for (std::size_t k = 0; k < size_; ++k) {
    const double t = at_[(next_ + kKept - size_ + k) % kKept];  // oldest first
    if (t < since) kept.note(t, 1);
  }
  *this = kept;
}

double LinkDownHistory::last() const {
  if (size_ == 0) return 0;
  return at_[(next_ + kKept - 1) % kKept];
}

}  // namespace ibfx
