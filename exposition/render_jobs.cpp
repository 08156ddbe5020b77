#include "exposition/render_jobs.h"

#include <string>
#include <vector>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {

RenderGroup JobsRenderer::group() const { return RenderGroup::kAggregates; }

void JobsRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const Snapshot& s = ctx.snapshot();
  const JobsView& jobs = s.jobs;
  if (!jobs.enabled) return;
  w.node(ExpositionIndex::kNoNode);
  w.family(families::kJobSourceUp);
  w.sample(families::kJobSourceUp.name, "", std::uint64_t{jobs.source_up ? 1U : 0U});
  w.family(families::kJobSourceLastSuccess);
  w.sample(families::kJobSourceLastSuccess.name, "", jobs.last_success_seconds);
  w.family(families::kJobHostsUnmatched);
  w.sample(families::kJobHostsUnmatched.name, "",
           static_cast<std::uint64_t>(jobs.join.unknown_hosts));

  // The join holds running jobs only (jobs/slurm_job_list.h keeps
  // job_state RUNNING), at most jobs.max_jobs (more fails the poll): a job
  // that ends or is cancelled leaves the next snapshot, and its series go.
  // job_id, not a name, keys every family: names, users and partitions
  // are Slurm's (untrusted, escaped) and live on infiniband_job_info only.
  const std::vector<JobPorts>& list = jobs.join.jobs;
  std::vector<std::string> ids;
  ids.reserve(list.size());
  for (const JobPorts& j : list) {
    std::string l;
    ExpositionWriter::add_label(l, "job_id", std::to_string(j.job_id));
    ids.push_back(std::move(l));
  }
  w.family(families::kJobInfo);
  for (std::size_t k = 0; k < list.size(); ++k) {
    std::string l = ids[k];
    ExpositionWriter::add_label(l, "job_name", list[k].name);
    ExpositionWriter::add_label(l, "user", list[k].user);
    ExpositionWriter::add_label(l, "partition", list[k].partition);
    w.sample(families::kJobInfo.name, l, std::uint64_t{1});
  }
  w.family(families::kJobHcaPorts);
  for (std::size_t k = 0; k < list.size(); ++k) {
    w.sample(families::kJobHcaPorts.name, ids[k], static_cast<std::uint64_t>(list[k].hca_ports));
  }
  w.family(families::kJobWaitSeconds);
  for (std::size_t k = 0; k < list.size(); ++k) {
    w.sample(families::kJobWaitSeconds.name, ids[k], list[k].transmit_wait_seconds);
  }
  w.family(families::kJobStallMax);
  for (std::size_t k = 0; k < list.size(); ++k) {
    w.sample(families::kJobStallMax.name, ids[k], list[k].stall_ratio_max);
  }

  // The roots as infiniband_congestion_root_score exports them (node_guid,
  // port: join on those for the cause and the far end).
  w.family(families::kRootJobs);
  const AnalysisResult& a = s.analysis.result;
  for (const RootJobs& r : jobs.join.roots) {
    if (r.root >= a.congestion.roots.size()) continue;
    const std::size_t port = a.congestion.roots[r.root].port;
    if (port >= a.ports.size()) continue;
    const PortScore& ps = a.ports[port];
    const std::int64_t view = ctx.view_of(ps.node, ps.port_index);
    if (view < 0) continue;
    w.node(static_cast<std::uint32_t>(ps.node));
    const std::string_view root_id = ctx.port_id(static_cast<std::size_t>(view));
    for (const auto& [job, ports] : r.jobs) {
      if (job >= list.size()) continue;
      w.sample(families::kRootJobs.name, root_id, "job_id", std::to_string(list[job].job_id),
               static_cast<double>(ports));
    }
  }
  w.node(ExpositionIndex::kNoNode);
}

}  // namespace ibfx
