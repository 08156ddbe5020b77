// When the next discovery runs, and why.
//
// Three things ask for a discovery: the schedule (discovery.interval), a
// partial discovery (SMPs lost, known nodes missing), retried sooner with a
// doubling back-off, and the sweep (a LID found answering as another node,
// a link that went down) or the MAD worker (replaced, or no LIDs yet).
// Under MAD loss the sweep can ask every few seconds: requests are
// therefore spaced, and the spacing doubles while they keep coming, so
// that loss never turns discovery into a storm of SMPs on the switches'
// management CPUs. Pure logic on a clock passed in, so it is testable.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace ibfx {

enum class DiscoveryReason : std::uint8_t {
  kStartup,        // no fabric yet
  kScheduled,      // discovery.interval
  kPartialRetry,   // the last one was partial
  kWorkerRestart,  // a new MAD worker, or switches without LIDs yet
  kLidMismatch,    // a LID answered as another node or port
  kLinkDown,       // LinkDownedCounter moved
  kNodeSilent,     // a node that answered stopped answering
};
inline constexpr int kDiscoveryReasonCount = 7;
std::string_view discovery_reason_name(DiscoveryReason reason);  // "lid_mismatch"

struct DiscoveryPacing {
  std::chrono::milliseconds interval{std::chrono::minutes(5)};
  std::chrono::milliseconds startup_retry{2000};
  std::chrono::milliseconds partial_retry_first{std::chrono::seconds(5)};
  std::chrono::milliseconds request_spacing{std::chrono::seconds(3)};
  std::chrono::milliseconds request_spacing_max{std::chrono::seconds(60)};
};

class DiscoveryPacer {
 public:
  using Clock = std::chrono::steady_clock;

  explicit DiscoveryPacer(DiscoveryPacing pacing = {});
  void set_interval(std::chrono::milliseconds interval);

  // A rediscovery asked for (any thread). Returns a number that changes
  // with every request, for a waiter to notice.
  void request(DiscoveryReason reason);
  std::uint64_t requests() const;

  struct Due {
    Clock::time_point at;
    DiscoveryReason reason{};
  };
  // The next discovery: the earliest of the schedule, the partial retry and
  // a (spaced) request.
  Due next() const;
  // A discovery starts now for `reason`: requests made so far are served.
  void started(DiscoveryReason reason, Clock::time_point now);
  // It ended: failed, or succeeded complete or partial.
  void finished(bool ok, bool partial);

  std::chrono::milliseconds partial_backoff() const;
  std::chrono::milliseconds spacing() const;

 private:
  mutable std::mutex mu_;
  DiscoveryPacing pacing_;
  bool have_fabric_ = false;
  bool last_partial_ = false;
  Clock::time_point last_start_{};
  Clock::time_point last_request_run_{};
  std::chrono::milliseconds backoff_;
  std::chrono::milliseconds spacing_;
  unsigned pending_ = 0;  // bit per DiscoveryReason
  std::uint64_t request_count_ = 0;
};

}  // namespace ibfx
