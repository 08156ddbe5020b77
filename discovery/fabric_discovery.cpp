#include "discovery/fabric_discovery.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/log.h"
#include "base/thread_name.h"

namespace ibfx {

namespace {
ForgetPolicy forget_policy(const DiscoveryConfig& c) {
  return ForgetPolicy{c.forget_after_discoveries, c.forget_after};
}

DiscoveryPacing with_interval(DiscoveryPacing pacing, std::chrono::milliseconds interval) {
  pacing.interval = interval;
  return pacing;
}
}  // namespace

FabricDiscovery::FabricDiscovery(DiscoverFn discover, const DiscoveryConfig& config,
                                 DiscoveryEvents events, DiscoveryPacing pacing)
    : discover_(std::move(discover)),
      events_(std::move(events)),
      merger_(forget_policy(config)),
      pacer_(with_interval(pacing, config.interval)) {}

FabricDiscovery::~FabricDiscovery() { stop(); }

std::shared_ptr<const Fabric> FabricDiscovery::fabric() const {
  std::lock_guard lock(fabric_mu_);
  return fabric_;
}

bool FabricDiscovery::discover_now() {
  const std::uint64_t generation = health_ ? health_->generation() : 0;
  DiscoveryResult r = discover_();
  if (!r.fabric) {
    if (events_.failed) events_.failed();
    pacer_.finished(false, false);
    log_warn("discovery failed: " + r.error);
    return false;
  }
  const Fabric& found = *r.fabric;
  // Merged, never replaced: a node this discovery missed is kept (and still
  // swept) until it has been missing long enough to be forgotten.
  MergeOutcome merged = merger_.merge(found);
  const bool partial = found.smp_timeouts > 0 || found.smp_errors > 0 || merged.missing > 0;
  if (events_.merged) events_.merged(found, merged, partial);
  pacer_.finished(true, partial);
  const std::string summary = "discovered " + std::to_string(found.nodes.size()) + " nodes, " +
                              std::to_string(found.port_count()) + " ports in " +
                              std::to_string(found.discovery_seconds) + " s";
  log_info(summary);
  if (events_.discovered) events_.discovered(summary);
  if (partial) {
    log_warn("partial discovery: " + std::to_string(found.smp_timeouts) + " SMP timeouts, " +
             std::to_string(found.smp_errors) + " SMP errors; " + std::to_string(merged.missing) +
             " known nodes and " + std::to_string(merged.ports_kept) +
             " ports not found, kept as last seen and still swept; retrying in " +
             std::to_string(std::chrono::duration<double>(pacer_.partial_backoff()).count()) +
             " s at most");
  }
  if (!merged.forgotten.empty()) {
    const ForgetPolicy policy = merger_.policy();
    for (const ForgottenNode& n : merged.forgotten) {
      log_warn("forgetting " + std::string(node_type_name(n.type)) + " \"" + n.description +
               "\" (" + guid_hex(n.guid) + "): missing from " + std::to_string(policy.discoveries) +
               " discoveries in a row and for " + format_duration(policy.after) +
               "; its series end");
    }
  }
  {
    std::lock_guard lock(fabric_mu_);
    fabric_ = std::move(merged.fabric);
  }
  if (health_ && generation != generation_) {
    // Through a new worker, right after the fabric came back, the SM may not
    // have assigned LIDs yet: sweeping then would skip every switch. Look
    // again soon, for a while, before sweeping what we have. (Judged on what
    // this discovery saw, not on the LIDs the merge kept.)
    const bool unaddressed =
        std::any_of(found.nodes.begin(), found.nodes.end(),
                    [](const FabricNode& n) { return n.type == NodeType::kSwitch && n.lid == 0; });
    if (unaddressed && ++unaddressed_discoveries_ < 10) {
      log_info("switches without a LID yet; discovering again before sweeping");
      request(DiscoveryReason::kWorkerRestart);
    } else {
      unaddressed_discoveries_ = 0;
      generation_ = generation;
    }
  }
  return true;
}

void FabricDiscovery::request(DiscoveryReason reason) {
  pacer_.request(reason);
  wake();
}

void FabricDiscovery::wake() {
  // Through stop_mu_: the loop reads the pacer's request count and stopping_
  // under it, so a request made between its check and its wait is not lost
  // (it would sleep until the schedule).
  { const std::lock_guard lock(stop_mu_); }
  stop_cv_.notify_all();
}

void FabricDiscovery::note_sweep(std::uint64_t lid_mismatches, std::uint64_t link_downed_total,
                                 bool went_silent) {
  // The pacer spaces such requests and backs off while they keep coming.
  if (lid_mismatches > 0) request(DiscoveryReason::kLidMismatch);
  if (link_downed_total != link_downed_seen_) request(DiscoveryReason::kLinkDown);
  if (went_silent) request(DiscoveryReason::kNodeSilent);
  link_downed_seen_ = link_downed_total;
}

void FabricDiscovery::reload(const DiscoveryConfig& config) {
  pacer_.set_interval(config.interval);
  merger_.set_policy(forget_policy(config));
}

void FabricDiscovery::start() {
  stopping_ = false;
  // The first discovery happens right away on the discovery thread.
  thread_ = std::thread([this] {
    set_thread_name("ibfx-discover");
    pacer_.started(DiscoveryReason::kStartup, std::chrono::steady_clock::now());
    if (events_.started) events_.started(DiscoveryReason::kStartup);
    if (!discover_now()) log_warn("initial discovery failed; retrying in the background");
    loop();
  });
}

void FabricDiscovery::loop() {
  while (!stopping_) {
    DiscoveryPacer::Due due = pacer_.next();
    {
      std::unique_lock lock(stop_mu_);
      const std::uint64_t seen = pacer_.requests();
      // Wake up for a new request too: it may be due sooner.
      stop_cv_.wait_until(lock, due.at,
                          [&] { return stopping_.load() || pacer_.requests() != seen; });
      if (stopping_) return;
    }
    due = pacer_.next();
    const auto now = std::chrono::steady_clock::now();
    if (due.at > now) continue;
    pacer_.started(due.reason, now);
    if (events_.started) events_.started(due.reason);
    discover_now();
  }
}

void FabricDiscovery::request_stop() {
  stopping_ = true;
  wake();
}

void FabricDiscovery::stop() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ibfx
