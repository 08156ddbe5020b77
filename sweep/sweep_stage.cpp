#include "sweep/sweep_stage.h"

#include <algorithm>
#include <utility>

#include "base/log.h"

namespace ibfx {

namespace {
MadEngineLimits mad_limits(const MadConfig& mad) {
  return MadEngineLimits{mad.global_inflight, mad.per_node_inflight, mad.timeout, mad.retries,
                         mad.max_mads_per_second};
}
}  // namespace

SweepStage::SweepStage(std::unique_ptr<MadTransport> transport, const Config& config)
    : transport_(std::move(transport)),
      engine_(*transport_, mad_limits(config.mad)),
      sweeper_(engine_, accumulator_),
      routes_(engine_, config.routes),
      mad_(config.mad),
      counters_(config.counters),
      sharding_(config.sharding),
      interval_(config.sweep_interval) {}

SweepResult SweepStage::sweep(const Fabric& fabric, const LocalPort& local,
                              const NodeNameMap& names) {
  ++sweeps_;
  SweepOptions o = options(fabric, local, names);
  // The route reader's SMPs ride this sweep's engine run: its pipeline,
  // per-node limit and deadline (what the deadline cuts is asked again at
  // a later sweep), queued behind the sweep's own reads so that the
  // sweep's node order stays its own. Its budget, routes.smps_per_second
  // x the time since the last sweep, bounds what they add to the sweep.
  o.before_run = [this, &fabric] {
    routes_.submit(fabric, std::chrono::steady_clock::now(), interval_);
  };
  SweepResult result = sweeper_.sweep(fabric, o);
  routes_.after_run();
  return result;
}

SweepOptions SweepStage::options(const Fabric& fabric, const LocalPort& local,
                                 const NodeNameMap& names) {
  SweepOptions o;
  SmGuardTracker::Result guard =
      guard_.next(fabric, local, counters_.probe_sm_and_local_ports, names);
  for (const LogLine& line : guard.lines) log(line);
  o.guard = std::move(guard.guard);
  o.include_hcas = counters_.include_hcas;
  o.include_switch_port0 = counters_.include_switch_port0;
  o.clear.enabled = counters_.clear_on_threshold;
  o.clear.threshold = counters_.clear_threshold;
  o.groups.error_details = counters_.error_details;
  o.groups.vl_xmit_wait = counters_.vl_transmit_wait;
  o.groups.congestion_control = counters_.congestion_control;
  o.shard_count = static_cast<std::uint32_t>(sharding_.count);
  o.shard_index = static_cast<std::uint32_t>(sharding_.index);
  // A sweep may use its interval less what the sweep thread does after it
  // (snapshot and analysis, as long as the last time; the render runs on
  // the publisher's thread), so that sweep + analysis fit the interval and a
  // slow or sick fabric cannot stall the schedule. Never less than two
  // whole retry chains (a silent node, asked first, can still be found
  // silent), but no more: at the default 100 ms x 3 attempts, four chains
  // (1.2 s) made a 1 s interval impossible. What the budget cuts off, the
  // next sweep reads first (round robin), so nothing is marked down for it.
  const auto after_sweep = std::chrono::duration_cast<std::chrono::milliseconds>(after_sweep_);
  o.budget = std::max(interval_ - after_sweep,
                      std::chrono::milliseconds(mad_.timeout * (mad_.retries + 1) * 2));
  return o;
}

void SweepStage::log_sweep(const SweepResult& sweep, std::size_t not_answering, bool overrun,
                           std::uint64_t snapshots_dropped) {
  log(trouble_.note(sweep, sweeps_, not_answering, overrun, snapshots_dropped, interval_));
}

void SweepStage::forget(std::uint64_t guid, const std::vector<std::uint8_t>& ports) {
  for (const std::uint8_t port : ports) accumulator_.forget(PortKey{guid, port});
  sweeper_.forget(guid);
  routes_.forget(guid);
}

void SweepStage::reload(const Config& config) {
  mad_ = config.mad;
  counters_ = config.counters;
  sharding_ = config.sharding;
  interval_ = config.sweep_interval;
  engine_.set_limits(mad_limits(mad_));
  routes_.reload(config.routes);
}

std::vector<int> SweepStage::device_ticks(const Fabric& fabric) const {
  std::vector<int> ticks(fabric.nodes.size(), -1);
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    if (const PmaCapabilities* caps = sweeper_.capabilities(fabric.nodes[n].guid)) {
      ticks[n] = caps->sample_tick;
    }
  }
  return ticks;
}

}  // namespace ibfx
