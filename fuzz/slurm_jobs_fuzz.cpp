// libFuzzer target: the Slurm job list (slurmrestd / squeue --json) and the
// hostlist expressions inside it. Both come from outside the daemon at run
// time: any input must end in a JobList (ok or with an error), never in a
// crash, an exception or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jobs/hostlist.h"
#include "jobs/slurm_job_list.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ibfx::JobListLimits limits;
  limits.max_jobs = 100;
  limits.max_hosts = 10000;
  const ibfx::JobList list = ibfx::parse_slurm_job_list(text, limits);
  if (!list.ok() && !list.jobs.empty()) __builtin_trap();
  if (list.jobs.size() > limits.max_jobs) __builtin_trap();
  std::size_t hosts = 0;
  for (const ibfx::SlurmJob& job : list.jobs) hosts += job.hosts.size();
  if (hosts > limits.max_hosts) __builtin_trap();
  // The same bytes as a hostlist expression.
  const ibfx::HostlistExpansion e = ibfx::expand_hostlist(text, 10000);
  if (e.hosts.size() > 10000 || (!e.ok() && !e.hosts.empty())) __builtin_trap();
  return 0;
}
