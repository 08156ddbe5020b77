// The errors counted at one receiver over the last minutes, in fixed time
// buckets: what the BER windows of issue #34 are computed from. A fixed
// array, so that a link's memory is bounded whatever its error rate and the
// sweep interval; only directions that saw errors have one (LinkHealthTracker).
#pragma once

#include <array>
#include <cstdint>

namespace ibfx {

// One direction's error counts (deltas of the receiver's PortCounters,
// IBA 16.1.3.5): SymbolErrorCounter, LinkErrorRecoveryCounter,
// LocalLinkIntegrityErrors, ExcessiveBufferOverrunErrors.
struct LinkErrorCounts {
  std::uint64_t symbol = 0;
  std::uint64_t recoveries = 0;
  std::uint64_t integrity = 0;
  std::uint64_t overrun = 0;
  bool any() const { return (symbol | recoveries | integrity | overrun) != 0; }
};

class BerWindow {
 public:
  // The long window is kBuckets buckets: 15 s each for the default 12 min.
  static constexpr std::size_t kBuckets = 48;

  // `long_window_seconds` fixes the bucket width (long / kBuckets).
  explicit BerWindow(double long_window_seconds = 720);

  // Adds errors seen at `now` (Unix seconds), in the bucket of `now`.
  void add(double now, const LinkErrorCounts& counts);
  // The errors of the buckets within the last `window_seconds` of `now`
  // (whole buckets: the current one and those that started after now - window).
  LinkErrorCounts sum(double now, double window_seconds) const;
  // No error left within the long window.
  bool empty(double now) const;

 private:
  struct Bucket {
    std::uint32_t slot = 0;  // now / bucket width; 0: never used
    std::uint32_t symbol = 0;
    std::uint32_t recoveries = 0;
    std::uint16_t integrity = 0;
    std::uint16_t overrun = 0;
  };
  std::uint32_t slot_of(double now) const;
  double bucket_seconds_;
  std::array<Bucket, kBuckets> buckets_{};
};

}  // namespace ibfx
