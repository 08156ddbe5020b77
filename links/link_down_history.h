// When one end of a cable saw its LinkDownedCounter (PortCounters, IBA
// 16.1.3.5: the link error recovery process failed and the link went down)
// move: the last kKept increments, enough to count flaps in any window an
// operator cares for (10 minutes for `flapping`, an hour on the status page)
// with bounded memory.
#pragma once

#include <array>
#include <cstdint>

namespace ibfx {

class LinkDownHistory {
 public:
  static constexpr std::size_t kKept = 16;

  // `downs` increments seen at `now` (Unix seconds).
  void note(double now, std::uint64_t downs);
  // Increments within the last `window_seconds` of `now`.
  std::uint32_t count(double now, double window_seconds) const;
  // Forgets the increments seen at or after `since`: a restart of the far
  // end explains them (a rebooting host takes its link down).
  void drop_since(double since);
  bool empty() const { return size_ == 0; }
  // The newest increment (0 when none).
  double last() const;

 private:
  std::array<double, kKept> at_{};
  std::uint8_t next_ = 0;
  std::uint8_t size_ = 0;
};

}  // namespace ibfx
