#include "pipeline/pipeline.h"

#include <utility>

namespace ibfx {

namespace {

// Adds `stage` to the line and returns it, typed.
template <typename T>
T* add_stage(std::vector<std::unique_ptr<Stage>>& stages, std::unique_ptr<T> stage) {
  T* typed = stage.get();
  stages.push_back(std::move(stage));
  return typed;
}

}  // namespace

Pipeline::Pipeline(const Config& config, AnalysisConfig analysis) {
  routes_ = add_stage(stages_, std::make_unique<RouteStage>());
  // The routes first: a saturated up port's cause rests on their evidence.
  add_stage(stages_, std::make_unique<AnalysisStage>(std::move(analysis)));
  add_stage(stages_, std::make_unique<RouteSendersStage>(routes_->tracker()));
  // Start-up: an unreadable token or host map file, a bad host_regex is a
  // ConfigError here, before anything runs.
  add_stage(stages_, std::make_unique<JobsStage>(config.jobs));
  events_ = add_stage(stages_, std::make_unique<EventsStage>(&routes_->tracker()));
  add_stage(stages_, std::make_unique<NodeHealthStage>(config));
  receipts_ = add_stage(stages_, std::make_unique<ReceiptsStage>(config));
}

Pipeline::~Pipeline() { stop(); }

void Pipeline::keep_in(const std::string& directory) {
  events_->keep_in(directory);
  if (auto routes = events_->take_restored_routes()) routes_->restore(std::move(*routes));
  receipts_->keep_in(directory);
}

void Pipeline::start() {
  for (const auto& stage : stages_) stage->start();
}

void Pipeline::run(SweepFrame& frame) {
  // No fabric, no sweep of it: nothing for the stages to read.
  if (!frame.snapshot.fabric) return;
  for (const auto& stage : stages_) stage->run(frame);
}

std::vector<StageReload> Pipeline::prepare_reload(const StageSettings& next) {
  std::vector<StageReload> reloads;
  reloads.reserve(stages_.size());
  for (const auto& stage : stages_) reloads.push_back(stage->prepare_reload(next));
  return reloads;
}

void Pipeline::forget(std::uint64_t guid, const std::vector<std::uint8_t>& ports) {
  for (const auto& stage : stages_) stage->forget(guid, ports);
}

void Pipeline::stop() {
  for (const auto& stage : stages_) stage->stop();
}

std::vector<std::string> Pipeline::stage_names() const {
  std::vector<std::string> names;
  for (const auto& stage : stages_) names.emplace_back(stage->name());
  return names;
}

}  // namespace ibfx
