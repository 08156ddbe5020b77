#include "pipeline/receipts_stage.h"

#include <chrono>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/utc_time.h"

namespace ibfx {

namespace {
// The running jobs' partial receipts change every sweep; a restart loses at
// most this much of them (the tracker counts it as missed, never invents it).
constexpr std::chrono::milliseconds kRunningSaveInterval{60000};
constexpr double kRunningSaveSeconds = 60;

bool receipts_on(const Config& config) { return config.jobs.enabled() && config.receipts.enabled; }
}  // namespace

ReceiptsStage::ReceiptsStage(const Config& config)
    : on_(receipts_on(config)),
      config_(config.receipts),
      tracker_(config.receipts),
      store_(std::make_shared<ReceiptStore>(std::string(), config.receipts)) {}

ReceiptsStage::~ReceiptsStage() { stop(); }

void ReceiptsStage::keep_in(const std::string& directory) {
  if (directory.empty()) return;
  auto store = std::make_shared<ReceiptStore>(directory, config_);
  auto file =
      std::make_unique<StateFile>(directory, "receipts-running.json", "running jobs' receipts",
                                  kRunningSaveInterval, "ibfx-receipts");
  std::lock_guard lock(mu_);
  store_ = std::move(store);
  running_file_ = std::move(file);
  const auto text = running_file_->read();
  if (!text) return;
  std::string error;
  if (tracker_.restore(*text, error)) {
    log_info("restored " + std::to_string(tracker_.stats().running) +
             " running jobs' receipts from " + running_file_->path());
  } else {
    running_file_->set_aside(error);
  }
}

void ReceiptsStage::run(SweepFrame& frame) {
  const SnapshotInputs& in = frame.snapshot;
  ReceiptSweepInput receipts;
  receipts.now = frame.now;
  receipts.jobs = in.jobs.list;
  receipts.ended = in.jobs.ended;
  receipts.jobs_polled_at = in.jobs.last_success_seconds;
  receipts.source_up = in.jobs.source_up;
  receipts.join = in.jobs.enabled ? &in.jobs.join : nullptr;
  receipts.fabric = in.fabric.get();
  receipts.node_names = &in.node_names;
  receipts.analysis = &in.analysis;
  receipts.routes = &in.routes;
  receipts.links = in.links.get();
  observe(receipts);
  frame.snapshot.receipts = view();
}

StageReload ReceiptsStage::prepare_reload(const StageSettings& next) {
  StageReload r;
  r.apply = [this, config = next.config](bool /*running*/) { reload(config); };
  return r;
}

void ReceiptsStage::observe(const ReceiptSweepInput& in) {
  if (!on_) return;
  last_now_ = in.now;
  std::vector<JobReceipt> finished;
  {
    std::lock_guard lock(mu_);
    finished = tracker_.observe(in);
  }
  for (const JobReceipt& r : finished) ++finished_[static_cast<std::size_t>(r.verdict)];
  if (!finished.empty()) store_->add(std::move(finished), in.now);
  if (in.now - last_saved_ >= kRunningSaveSeconds) save_running(in.now);
}

ReceiptsView ReceiptsStage::view() const {
  ReceiptsView v;
  v.enabled = on_;
  v.finished = finished_;
  return v;
}

void ReceiptsStage::reload(const Config& config) {
  const bool on = receipts_on(config);
  {
    std::lock_guard lock(mu_);
    if (!on && on_) tracker_ = ReceiptTracker(config.receipts);  // no receipt invented
    tracker_.reload(config.receipts);
  }
  if (on != on_) log_info(std::string("job receipts are now ") + (on ? "on" : "off"));
  on_ = on;
  config_ = config.receipts;
  store_->reload(config.receipts);
}

bool ReceiptsStage::peek(std::uint64_t job_id, double now, JobReceipt& out) const {
  std::lock_guard lock(mu_);
  return on_ && tracker_.peek(job_id, now, out);
}

std::shared_ptr<const ReceiptStore> ReceiptsStage::store() const {
  std::lock_guard lock(mu_);
  return store_;
}

ReceiptsStageStats ReceiptsStage::stats() const {
  ReceiptsStageStats s;
  std::shared_ptr<const ReceiptStore> store;
  {
    std::lock_guard lock(mu_);
    s.running = tracker_.stats().running;
    store = store_;
    if (running_file_) s.write_failures += running_file_->failures();
  }
  s.stored = store->stats().receipts;
  s.write_failures += store->stats().write_failures;
  return s;
}

void ReceiptsStage::save_running(double now) {
  last_saved_ = now;
  if (!running_file_) return;
  std::string text;
  {
    std::lock_guard lock(mu_);
    text = tracker_.save(now);
  }
  running_file_->save([text = std::move(text)] { return text; });
}

void ReceiptsStage::stop() {
  if (std::exchange(stopped_, true)) return;
  // As of the last sweep observed: what follows it until the next run's
  // first sweep was not seen, and the tracker counts it as missed.
  if (on_) save_running(last_now_ > 0 ? last_now_ : unix_seconds_now());
  if (running_file_) running_file_->stop();
  store_->stop();
}

}  // namespace ibfx
