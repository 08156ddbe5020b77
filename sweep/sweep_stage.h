// The sweep stage of the pipeline: each sweep of the known fabric through
// the Sweeper, and what goes around it. It owns the MAD engine over the
// transport, the accumulator the readings go into, the SweepOptions the
// configuration asks for, each sweep's SM guard (SmGuardTracker), the
// budget that leaves the sweep thread room for what follows a sweep, and
// each sweep's log line (SweepTroubleLog). What it keeps from one sweep to
// the next (the totals, each node's PMA capabilities) lives here, so that
// forgetting a node is one call. It also owns the route reader
// (sweep/route_reader.h), whose SMPs ride each sweep's engine run. Sweep
// thread, but for the constructor.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "config/config.h"
#include "config/node_name_map.h"
#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"
#include "fabric/route_tables.h"
#include "fabric/sweep_result.h"
#include "mad/mad_engine.h"
#include "mad/mad_transport.h"
#include "sweep/route_reader.h"
#include "sweep/sm_guard_tracker.h"
#include "sweep/sweep_trouble_log.h"
#include "sweep/sweeper.h"

namespace ibfx {

class SweepStage {
 public:
  // `transport`: what the engine sends through (the MAD worker's channel in
  // the daemon). Of `config` it reads mad, counters, sharding and
  // sweep_interval.
  SweepStage(std::unique_ptr<MadTransport> transport, const Config& config);
  SweepStage(const SweepStage&) = delete;
  SweepStage& operator=(const SweepStage&) = delete;

  // One sweep of `fabric`, sent from the port `local` (zeros when unknown:
  // a transport without TransportHealth); `names` (the node-name-map)
  // names the nodes in what the SM guard logs.
  SweepResult sweep(const Fabric& fabric, const LocalPort& local, const NodeNameMap& names);

  // How long the sweep thread took after the last sweep (analysis and
  // snapshot): the next sweep's budget leaves that much of the interval.
  void after_sweep_took(std::chrono::steady_clock::duration took) { after_sweep_ = took; }

  // The last sweep's log line (SweepTroubleLog): `not_answering` nodes
  // asked and silent; `overrun`: it outlasted its interval;
  // `snapshots_dropped`: the publisher's drops so far.
  void log_sweep(const SweepResult& sweep, std::size_t not_answering, bool overrun,
                 std::uint64_t snapshots_dropped);

  // A node that left the known fabric, with its port numbers: its totals
  // and what its PMA said go with it, so that should it come back its
  // series start again rather than resume from totals hours old. A
  // switch's forwarding table goes too.
  void forget(std::uint64_t guid, const std::vector<std::uint8_t>& ports);

  // The switches' forwarding tables as the route reader last published
  // them: null when routes.enabled is false, the transport cannot send
  // SMPs, or before the first table was read whole. The same pointer
  // until something changes (RouteTables::version: the content).
  std::shared_ptr<const RouteTables> routes() const { return routes_.tables(); }
  const RouteReaderStats& route_stats() const { return routes_.stats(); }

  // New settings (SIGHUP): MAD limits at once, the rest from the next sweep.
  // The totals stay.
  void reload(const Config& config);

  // Each node of `fabric`'s PortSamplesControl.Tick as the sweeps learnt it
  // (-1: unknown).
  std::vector<int> device_ticks(const Fabric& fabric) const;
  // The totals after the last sweep: what the analysis and the snapshot read.
  const CounterAccumulator& accumulator() const { return accumulator_; }
  const MadEngineStats& engine_stats() const { return engine_.stats(); }

 private:
  // What the configuration asks of a sweep of `fabric` (the guard's lines
  // logged).
  SweepOptions options(const Fabric& fabric, const LocalPort& local, const NodeNameMap& names);

  std::unique_ptr<MadTransport> transport_;
  MadEngine engine_;
  CounterAccumulator accumulator_;
  Sweeper sweeper_;
  SmGuardTracker guard_;
  RouteReader routes_;
  // Sweep trouble is logged at most once a minute, summed up since.
  SweepTroubleLog trouble_;
  std::uint64_t sweeps_ = 0;
  std::chrono::steady_clock::duration after_sweep_{};
  // The settings in force (Config's, applied by reload()).
  MadConfig mad_;
  CountersConfig counters_;
  ShardingConfig sharding_;
  Duration interval_;
};

}  // namespace ibfx
