#include "links/ber_window.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ibfx {

namespace {
// Saturating: a cable throwing more than 4e9 symbol errors in 15 s is
// judged the same as one throwing exactly that many.
template <typename T>
void add_clamped(T& to, std::uint64_t v) {
  const std::uint64_t room = std::numeric_limits<T>::max() - to;
  to = static_cast<T>(to + std::min(v, room));
}
}  // namespace

BerWindow::BerWindow(double long_window_seconds)
    : bucket_seconds_(std::max(long_window_seconds, 1.0) / static_cast<double>(kBuckets)) {}

std::uint32_t BerWindow::slot_of(double now) const {
  // +1: slot 0 marks a bucket never used.
  return static_cast<std::uint32_t>(std::max(0.0, std::floor(now / bucket_seconds_))) + 1;
}

void BerWindow::add(double now, const LinkErrorCounts& counts) {
  const std::uint32_t slot = slot_of(now);
  Bucket& b = buckets_[slot % kBuckets];
  if (b.slot != slot) b = Bucket{slot};
  add_clamped(b.symbol, counts.symbol);
  add_clamped(b.recoveries, counts.recoveries);
  add_clamped(b.integrity, counts.integrity);
  add_clamped(b.overrun, counts.overrun);
}

LinkErrorCounts BerWindow::sum(double now, double window_seconds) const {
  const std::uint32_t current = slot_of(now);
  const auto span = static_cast<std::uint32_t>(
      std::clamp(std::ceil(window_seconds / bucket_seconds_), 1.0, static_cast<double>(kBuckets)));
  LinkErrorCounts out;
  for (const Bucket& b : buckets_) {
    if (b.slot == 0 || b.slot > current || current - b.slot >= span) continue;
    out.symbol += b.symbol;
    out.recoveries += b.recoveries;
    out.integrity += b.integrity;
    out.overrun += b.overrun;
  }
  return out;
}

bool BerWindow::empty(double now) const {
  return !sum(now, bucket_seconds_ * static_cast<double>(kBuckets)).any();
}

}  // namespace ibfx
