#include "discovery/discovery_pacer.h"

#include <algorithm>

namespace ibfx {

std::string_view discovery_reason_name(DiscoveryReason reason) {
  switch (reason) {
    case DiscoveryReason::kStartup:
      return "startup";
    case DiscoveryReason::kScheduled:
      return "scheduled";
    case DiscoveryReason::kPartialRetry:
      return "partial_retry";
    case DiscoveryReason::kWorkerRestart:
      return "worker_restart";
    case DiscoveryReason::kLidMismatch:
      return "lid_mismatch";
    case DiscoveryReason::kLinkDown:
      return "link_down";
    case DiscoveryReason::kNodeSilent:
      return "node_silent";
  }
  return "unknown";
}

namespace {
unsigned bit(DiscoveryReason r) { return 1u << static_cast<unsigned>(r); }
// The worker's requests gate the sweep (it waits for a fabric discovered
// through the new worker) and are bounded by how often a worker can be
// replaced: they get the base spacing, never the back-off.
constexpr unsigned kGating = 1u << static_cast<unsigned>(DiscoveryReason::kWorkerRestart);
}  // namespace

DiscoveryPacer::DiscoveryPacer(DiscoveryPacing pacing)
    : pacing_(pacing), backoff_(pacing.partial_retry_first), spacing_(pacing.request_spacing) {}

void DiscoveryPacer::set_interval(std::chrono::milliseconds interval) {
  std::lock_guard lock(mu_);
  pacing_.interval = interval;
}

void DiscoveryPacer::request(DiscoveryReason reason) {
  std::lock_guard lock(mu_);
  pending_ |= bit(reason);
  ++request_count_;
}

std::uint64_t DiscoveryPacer::requests() const {
  std::lock_guard lock(mu_);
  return request_count_;
}

std::chrono::milliseconds DiscoveryPacer::partial_backoff() const {
  std::lock_guard lock(mu_);
  return backoff_;
}

std::chrono::milliseconds DiscoveryPacer::spacing() const {
  std::lock_guard lock(mu_);
  return spacing_;
}

DiscoveryPacer::Due DiscoveryPacer::next() const {
  std::lock_guard lock(mu_);
  if (!have_fabric_) {
    // Until the first success, retry every few seconds: the SM may still be
    // bringing the subnet up.
    const auto at = last_start_ == Clock::time_point{} ? Clock::time_point{}
                                                       : last_start_ + pacing_.startup_retry;
    return {at, DiscoveryReason::kStartup};
  }
  Due due{last_start_ + pacing_.interval, DiscoveryReason::kScheduled};
  if (last_partial_) {
    const auto at = last_start_ + std::min(backoff_, pacing_.interval);
    if (at < due.at) due = {at, DiscoveryReason::kPartialRetry};
  }
  if ((pending_ & kGating) != 0) {
    const auto at = last_start_ + pacing_.request_spacing;
    if (at < due.at) due = {at, DiscoveryReason::kWorkerRestart};
  }
  for (const DiscoveryReason r :
       {DiscoveryReason::kLidMismatch, DiscoveryReason::kLinkDown, DiscoveryReason::kNodeSilent}) {
    if ((pending_ & bit(r)) == 0) continue;
    const auto at = std::max(last_start_ + pacing_.request_spacing, last_request_run_ + spacing_);
    if (at < due.at) due = {at, r};
  }
  return due;
}

void DiscoveryPacer::started(DiscoveryReason reason, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (reason == DiscoveryReason::kLidMismatch || reason == DiscoveryReason::kLinkDown ||
      reason == DiscoveryReason::kNodeSilent) {
    // Requests that keep coming double the spacing; a quiet spell (twice
    // the spacing without one) brings it back to the base.
    const bool streak =
        last_request_run_ != Clock::time_point{} && now - last_request_run_ <= 2 * spacing_;
    spacing_ =
        streak ? std::min(spacing_ * 2, pacing_.request_spacing_max) : pacing_.request_spacing;
    last_request_run_ = now;
  }
  pending_ = 0;  // this discovery serves every request made before it
  last_start_ = now;
}

void DiscoveryPacer::finished(bool ok, bool partial) {
  std::lock_guard lock(mu_);
  if (!ok) {
    // A failed discovery changes nothing known: retry as a partial one.
    if (have_fabric_) {
      backoff_ =
          last_partial_ ? std::min(backoff_ * 2, pacing_.interval) : pacing_.partial_retry_first;
      last_partial_ = true;
    }
    return;
  }
  have_fabric_ = true;
  if (partial) {
    backoff_ =
        last_partial_ ? std::min(backoff_ * 2, pacing_.interval) : pacing_.partial_retry_first;
  } else {
    backoff_ = pacing_.partial_retry_first;
  }
  last_partial_ = partial;
}

}  // namespace ibfx
