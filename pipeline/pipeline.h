// The stages of the pipeline between a sweep and its snapshot, in their
// order (issue #42): routes (the model of the tables read), analysis
// (scores, roots, link health), senders (routing balance, the senders
// behind each root), jobs (the join), events (congestion, link and route
// events, saved), nodes (each host's health), receipts (each job's). Every
// stage has the one shape of pipeline/stage.h; this class hands each
// sweep's frame down the line once, and a reload, a forgotten node and the
// stop to every stage. Exporter (daemon/exporter.h) feeds it from the
// sweep thread and publishes what it builds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analysis_config.h"
#include "config/config.h"
#include "pipeline/analysis_stage.h"
#include "pipeline/events_stage.h"
#include "pipeline/jobs_stage.h"
#include "pipeline/node_health_stage.h"
#include "pipeline/receipts_stage.h"
#include "pipeline/route_senders_stage.h"
#include "pipeline/route_stage.h"
#include "pipeline/stage.h"
#include "snapshot/snapshot.h"

namespace ibfx {

class Pipeline {
 public:
  // Throws ConfigError for an unreadable token or host map file, a bad
  // host_regex (start-up, before anything runs).
  Pipeline(const Config& config, AnalysisConfig analysis);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Before start: keeps the events, the re-routes and the receipts in
  // `directory` (Config::state_directory; empty: nowhere) and restores what
  // a previous run saved there.
  void keep_in(const std::string& directory);
  // Background mode: every stage's threads.
  void start();
  // Sweep thread: `frame` through every stage, in order; the frame's
  // snapshot inputs are then complete but for what only the exporter
  // knows (its own metrics, the sweep's time).
  void run(SweepFrame& frame);
  // Every stage's reload read and checked, in order; throws ConfigError
  // (from the first bad one) and nothing is applied.
  std::vector<StageReload> prepare_reload(const StageSettings& next);
  void forget(std::uint64_t guid, const std::vector<std::uint8_t>& ports);
  // After the sweeps: every stage saves what it keeps and stops.
  void stop();

  // The stages the HTTP side and the exporter's metrics read.
  const EventsStage& events() const { return *events_; }
  const ReceiptsStage& receipts() const { return *receipts_; }
  // The stages' names, in their order (tests, docs).
  std::vector<std::string> stage_names() const;

 private:
  // Owned here, in run order; the typed pointers below point into it.
  std::vector<std::unique_ptr<Stage>> stages_;
  RouteStage* routes_ = nullptr;
  EventsStage* events_ = nullptr;
  ReceiptsStage* receipts_ = nullptr;
};

}  // namespace ibfx
