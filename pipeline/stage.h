// The one shape of a pipeline stage (issue #42). Each sweep's frame passes
// down the line once: every stage reads what the stages before it put in
// the frame and adds its own part, and the last part built is the
// snapshot (Pipeline, pipeline/pipeline.h, holds them in order). The same
// interface reloads, forgets and stops every stage, so that Exporter only
// wires them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "analysis/analysis_config.h"
#include "analysis/route_evidence.h"
#include "config/config.h"
#include "fabric/route_tables.h"
#include "snapshot/snapshot.h"

namespace ibfx {

// What one sweep carries down the pipeline: the snapshot's inputs as the
// stages fill them, and what a stage hands only to the stages after it.
struct SweepFrame {
  // fabric, sweep, accumulator, node_names and device_ticks are set before
  // the first stage; each stage fills its own fields (analysis, routes,
  // jobs, links, events, nodes, receipts).
  SnapshotInputs snapshot;
  // Unix seconds at the start of the sweep, where its intervals end
  // (SweepAnalyzer::analyze).
  double now = 0;
  // The forwarding tables the sweep stage holds (null: none read).
  std::shared_ptr<const RouteTables> tables;
  // The routes stage's evidence for the analysis (null: no usable model).
  const RouteEvidence* route_evidence = nullptr;
};

// What a reload hands to every stage.
struct StageSettings {
  const Config& config;
  const AnalysisConfig& analysis;
};

// A reload in two steps, so that a bad setting keeps every running one:
// Stage::prepare_reload reads and checks everything that can fail, then
// `apply` swaps on the sweep thread between two sweeps, then `finish` runs
// on the reloading thread (slow clean-up that must not hold a sweep, such
// as a retired job source's last poll). Either may be empty.
struct StageReload {
  std::function<void(bool running)> apply;  // running: the pipeline's threads are up
  std::function<void()> finish;
};

class Stage {
 public:
  Stage() = default;
  virtual ~Stage() = default;
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  // For logs and tests: what the stage is ("analysis", "events", ...).
  virtual std::string_view name() const = 0;

  // Background mode (the daemon): the threads of its own it needs, if any.
  virtual void start() {}
  // Sweep thread: one sweep's frame, read and added to.
  virtual void run(SweepFrame& frame) = 0;
  // New settings (SIGHUP): reads and checks them; throws ConfigError and
  // applies nothing when one is bad.
  virtual StageReload prepare_reload(const StageSettings& /*next*/) { return {}; }
  // A node that left the known fabric, with its port numbers: should it
  // come back, it starts again rather than resume from state hours old.
  virtual void forget(std::uint64_t /*guid*/, const std::vector<std::uint8_t>& /*ports*/) {}
  // After the sweeps (shutdown): saves what it keeps and stops its threads.
  // Idempotent.
  virtual void stop() {}
};

}  // namespace ibfx
