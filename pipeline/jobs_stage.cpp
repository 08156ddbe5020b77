#include "pipeline/jobs_stage.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "base/log.h"
#include "base/log_text.h"

namespace ibfx {

JobsStage::JobsStage(const JobsConfig& config) {
  if (!config.enabled()) return;
  join_config_ = load_job_join_config(config);
  join_.emplace(join_config_);
  source_ = std::make_unique<JobSource>(config);
}

JobsStage::~JobsStage() { stop(); }

void JobsStage::start() {
  if (source_) source_->start();
}

void JobsStage::stop() {
  if (source_) source_->stop();
}

JobsStage::Reload JobsStage::prepare_reload(const JobsConfig& config) {
  Reload r;
  r.on_ = config.enabled();
  if (!r.on_) return r;
  r.join_config_ = load_job_join_config(config);
  if (join_ && *r.join_config_ == join_config_) r.join_config_.reset();
  if (r.join_config_) r.join_.emplace(*r.join_config_);  // throws for a bad host_regex
  if (source_) {
    source_->reload(config);
  } else {
    r.source_ = std::make_unique<JobSource>(config);
  }
  return r;
}

StageReload JobsStage::prepare_reload(const StageSettings& next) {
  // Shared: a std::function is copyable, the reload and the source are not.
  auto reload = std::make_shared<Reload>(prepare_reload(next.config.jobs));
  auto retired = std::make_shared<std::unique_ptr<JobSource>>();
  StageReload r;
  r.apply = [this, reload, retired](bool running) {
    *retired = apply(std::move(*reload), running);
  };
  // Its last poll may take up to jobs.timeout: not on the sweep thread.
  r.finish = [retired] {
    if (*retired) (*retired)->stop();
  };
  return r;
}

void JobsStage::run(SweepFrame& frame) {
  frame.snapshot.jobs = join(frame.snapshot.fabric, frame.snapshot.analysis);
}

std::unique_ptr<JobSource> JobsStage::apply(Reload reload, bool running) {
  if (!reload.on_) {
    join_.reset();
    join_config_ = {};
    return std::move(source_);
  }
  if (reload.join_) {
    join_config_ = std::move(*reload.join_config_);
    join_ = std::move(reload.join_);
  }
  if (reload.source_) {
    source_ = std::move(reload.source_);
    if (running) source_->start();
  }
  return nullptr;
}

JobsView JobsStage::join(const std::shared_ptr<const Fabric>& fabric,
                         const SweepAnalysis& analysis) {
  JobsView view;
  if (!source_ || !join_) return view;
  const JobSourceState state = source_->state();
  view.enabled = true;
  view.source_up = state.up;
  view.last_success_seconds = state.last_success_seconds;
  view.list = state.jobs;
  view.ended = state.ended;
  view.join = join_->join(fabric, analysis.result.ports, analysis.samples,
                          analysis.result.congestion, state.jobs);
  // A Slurm node name that matches no HCA: the job's ports are missing from
  // its series. Said at most once a minute, with the count.
  if (view.join.unknown_hosts > 0 && unmatched_hosts_log_.allow(std::chrono::steady_clock::now())) {
    std::size_t jobs = 0;
    for (const JobPorts& j : view.join.jobs) jobs += j.hosts_unknown > 0 ? 1 : 0;
    // Slurm's node names, escaped: they reach a terminal or a journal.
    std::string examples;
    for (const std::string& host : view.join.unknown_host_examples)
      examples += (examples.empty() ? "" : ", ") + quote(host);
    if (view.join.unknown_hosts > view.join.unknown_host_examples.size()) examples += ", ...";
    log_warn(std::to_string(view.join.unknown_hosts) + " hosts of " + std::to_string(jobs) +
             " running Slurm jobs match no HCA in the fabric (" + examples +
             "; jobs.host_regex, jobs.host_map; docs/jobs.md): those jobs' series miss their "
             "ports");
  }
  return view;
}

std::vector<std::vector<std::uint64_t>> JobsStage::root_job_ids(const JobsView& jobs,
                                                                const SweepAnalysis& analysis) {
  std::vector<std::vector<std::uint64_t>> ids;
  if (!jobs.enabled) return ids;
  ids.resize(analysis.result.congestion.roots.size());
  for (const RootJobs& r : jobs.join.roots) {
    if (r.root >= ids.size()) continue;
    for (const auto& [job, ports] : r.jobs) {
      if (job < jobs.join.jobs.size()) ids[r.root].push_back(jobs.join.jobs[job].job_id);
    }
  }
  return ids;
}

std::vector<std::vector<EventSender>> JobsStage::root_senders(
    const RouteSweep& routes, const JobsView& jobs, const SweepAnalysis& analysis,
    const Fabric& fabric, const std::vector<std::string>& node_names) {
  std::vector<std::vector<EventSender>> out;
  if (routes.senders.empty()) return out;
  out.resize(analysis.result.congestion.roots.size());
  for (const RootSenders& rs : routes.senders) {
    if (rs.root >= out.size()) continue;
    for (const RootSender& sender : rs.top) {
      const auto n = static_cast<std::size_t>(sender.endpoint.node);
      if (n >= fabric.nodes.size()) continue;
      EventSender e;
      e.node = {fabric.nodes[n].guid, n < node_names.size() ? node_names[n] : std::string()};
      e.port = sender.endpoint.port;
      e.bytes_per_second = sender.bytes_per_second;
      if (jobs.enabled && sender.port != kNoPort) {
        for (const std::size_t j : jobs_on_port(jobs.join, sender.port)) {
          e.jobs.push_back(jobs.join.jobs[j].job_id);
        }
        std::sort(e.jobs.begin(), e.jobs.end());
        e.jobs.erase(std::unique(e.jobs.begin(), e.jobs.end()), e.jobs.end());
      }
      out[rs.root].push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace ibfx
