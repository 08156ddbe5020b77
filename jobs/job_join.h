// Which jobs the fabric hurts: Slurm's running jobs (jobs/
// slurm_job_list.h) joined to the analysed ports of each sweep. A job's
// ports are its hosts' HCA ports and the leaf (switch) ports cabled to them;
// a host's HCAs are found by the host part of their node description (the
// "<host> mlx5_<n>" of rdma-ndd, the same descriptions the rails use;
// jobs.host_regex), or by jobs.host_map. Pure computation; the stall
// seconds since each job appeared are the one state kept between sweeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/congestion.h"
#include "analysis/port_score.h"
#include "config/config.h"
#include "fabric/fabric.h"
#include "jobs/slurm_job_list.h"

namespace ibfx {

struct JobJoinConfig {
  std::string host_regex{kDefaultHostRegex};  // host = first capture group of the node description
  // Slurm node name -> the host part of its HCAs' node descriptions.
  std::unordered_map<std::string, std::string> host_map;
  friend bool operator==(const JobJoinConfig&, const JobJoinConfig&) = default;
};

// "<slurm name> <description host>" per line, '#' comments (jobs.host_map).
// Throws ConfigError "<source>:<line>: jobs.host_map: <what>".
std::unordered_map<std::string, std::string> parse_job_host_map(const std::string& text,
                                                                const std::string& source);

// The join's settings of `jobs`: its host_regex, and its host_map file read
// and parsed (at start-up and on SIGHUP). Throws ConfigError naming the
// file and line.
JobJoinConfig load_job_join_config(const JobsConfig& jobs);

struct JobPorts {
  std::uint64_t job_id = 0;
  std::string name, user, partition;
  std::size_t hca_ports = 0;         // the job's HCA ports found in the fabric
  std::size_t hosts_unknown = 0;     // hosts with no HCA in the fabric
  double transmit_wait_seconds = 0;  // stall seconds of its ports since it was first seen
  double stall_ratio_max = 0;        // worst W over its ports in the last interval
  std::vector<std::size_t> ports;    // analysed port indices: HCA ports, then leaf ports into them
};

// One exported root of the forest and the jobs in its tree.
struct RootJobs {
  std::size_t root = 0;  // index into CongestionForest::roots
  // (index into JobJoinResult::jobs, how many of the job's ports are in the tree)
  std::vector<std::pair<std::size_t, std::size_t>> jobs;
};

struct JobJoinResult {
  std::vector<JobPorts> jobs;     // in the job list's order
  std::vector<RootJobs> roots;    // roots with at least one job, in forest order
  std::size_t unknown_hosts = 0;  // over all jobs
  // The first few of those host names (Slurm's spelling), for the log line
  // that tells the operator which rule to fix.
  std::vector<std::string> unknown_host_examples;
};

inline constexpr std::size_t kUnknownHostExamples = 5;

// The jobs (indices into result.jobs) whose HCA ports include analysed
// port `port` (JobPorts::ports), in the job list's order.
std::vector<std::size_t> jobs_on_port(const JobJoinResult& result, std::size_t port);

class JobJoin {
 public:
  // Throws ConfigError for a host_regex that does not compile.
  explicit JobJoin(JobJoinConfig config);

  // `ports` and `samples` are the sweep's analysed ports (parallel), of
  // `fabric`; `forest` their congestion forest. Null `jobs`: no job list
  // (the result is empty, and the stall sums restart when one comes back).
  JobJoinResult join(const std::shared_ptr<const Fabric>& fabric,
                     const std::vector<PortScore>& ports, const std::vector<PortSample>& samples,
                     const CongestionForest& forest,
                     const std::shared_ptr<const std::vector<SlurmJob>>& jobs);

  // The host part of a node description, "" when the regex does not match.
  std::string host_of(const std::string& description) const;

 private:
  struct HcaPort {
    std::int32_t node;
    std::uint32_t port_index;
    std::int32_t leaf_node;  // kNoNode: not cabled to a switch
    std::uint32_t leaf_port_index;
  };
  void index_fabric(const Fabric& fabric);
  // join's steps. The analysed index of each (node, port index) of this
  // sweep, and one of them (kNoPort: not analysed).
  void index_analysed(const std::vector<PortScore>& ports);
  std::size_t analysed(std::int32_t node, std::uint32_t port_index) const;
  // The job's analysed ports: its HCA ports, then the leaf ports cabled to
  // them; the hosts not found are counted (a few named in `out`).
  void find_ports(const SlurmJob& job, JobPorts& j, JobJoinResult& out) const;

  JobJoinConfig config_;
  std::regex host_re_;
  std::shared_ptr<const Fabric> indexed_;  // fabric the host index is of
  std::unordered_map<std::string, std::vector<HcaPort>> by_host_;
  std::vector<std::uint32_t> first_slot_;  // per node: slot of its port 0 in analysed_
  std::vector<std::size_t> analysed_;      // slot -> analysed port index (kNoPort: none)
  std::unordered_map<std::uint64_t, double> wait_seconds_;  // job -> stall seconds so far
};

}  // namespace ibfx
