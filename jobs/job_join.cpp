#include "jobs/job_join.h"

#include <algorithm>
#include <unordered_set>

#include "base/log_text.h"
#include "config/config.h"
#include "config/config_error.h"
#include "config/text_file.h"
#include "config/user_regex.h"

namespace ibfx {

std::unordered_map<std::string, std::string> parse_job_host_map(const std::string& text,
                                                                const std::string& source) {
  std::unordered_map<std::string, std::string> map;
  std::size_t pos = 0;
  int line = 0;
  while (pos <= text.size()) {
    ++line;
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string row = text.substr(pos, end - pos);
    pos = end + 1;
    if (const std::size_t hash = row.find('#'); hash != std::string::npos) row.resize(hash);
    std::vector<std::string> words;
    std::size_t at = 0;
    while (true) {
      at = row.find_first_not_of(" \t\r", at);
      if (at == std::string::npos) break;
      const std::size_t stop = std::min(row.find_first_of(" \t\r", at), row.size());
      words.push_back(row.substr(at, stop - at));
      at = stop;
    }
    if (words.empty()) continue;
    const std::string where = source + ":" + std::to_string(line) + ": jobs.host_map: ";
    if (words.size() != 2) {
      throw ConfigError(where + "expected \"<slurm node name> <node description host>\", got " +
                        quote(row));
    }
    if (!map.emplace(words[0], words[1]).second) {
      throw ConfigError(where + quote(words[0]) + " is mapped twice");
    }
  }
  return map;
}

JobJoinConfig load_job_join_config(const JobsConfig& jobs) {
  JobJoinConfig out;
  out.host_regex = jobs.host_regex;
  // A host map is one line per Slurm node: 1 MiB is tens of thousands.
  if (!jobs.host_map.empty()) {
    out.host_map =
        parse_job_host_map(read_text_file(jobs.host_map, std::size_t{1} << 20), jobs.host_map);
  }
  return out;
}

JobJoin::JobJoin(JobJoinConfig config) : config_(std::move(config)) {
  try {
    host_re_ = compile_user_regex(config_.host_regex);
  } catch (const UserRegexError& e) {
    throw ConfigError(std::string("jobs.host_regex: ") + e.what());
  }
}

std::string JobJoin::host_of(const std::string& description) const {
  std::smatch m;
  if (!std::regex_search(description, m, host_re_) || m.size() < 2) return {};
  return m[1].str();
}

void JobJoin::index_fabric(const Fabric& fabric) {
  by_host_.clear();
  first_slot_.assign(fabric.nodes.size() + 1, 0);
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    first_slot_[n + 1] = first_slot_[n] + static_cast<std::uint32_t>(fabric.nodes[n].ports.size());
  }
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const FabricNode& node = fabric.nodes[n];
    if (node.type != NodeType::kHca) continue;
    const std::string host = host_of(node.description);
    if (host.empty()) continue;
    for (std::size_t p = 0; p < node.ports.size(); ++p) {
      const FabricPort& port = node.ports[p];
      HcaPort h{static_cast<std::int32_t>(n), static_cast<std::uint32_t>(p), kNoNode, 0};
      if (port.linked()) {
        const FabricNode& far = fabric.nodes[static_cast<std::size_t>(port.remote_node)];
        if (far.type == NodeType::kSwitch) {
          for (std::size_t q = 0; q < far.ports.size(); ++q) {
            if (far.ports[q].number == port.remote_port) {
              h.leaf_node = port.remote_node;
              h.leaf_port_index = static_cast<std::uint32_t>(q);
            }
          }
        }
      }
      by_host_[host].push_back(h);
    }
  }
}

void JobJoin::index_analysed(const std::vector<PortScore>& ports) {
  analysed_.assign(first_slot_.back(), kNoPort);
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const auto node = static_cast<std::size_t>(ports[i].node);
    if (node + 1 >= first_slot_.size()) continue;
    const std::uint32_t slot = first_slot_[node] + ports[i].port_index;
    if (slot < first_slot_[node + 1]) analysed_[slot] = i;
  }
}

std::size_t JobJoin::analysed(std::int32_t node, std::uint32_t port_index) const {
  return analysed_[first_slot_[static_cast<std::size_t>(node)] + port_index];
}

void JobJoin::find_ports(const SlurmJob& job, JobPorts& j, JobJoinResult& out) const {
  std::vector<std::size_t> leaf;
  for (const std::string& slurm_host : job.hosts) {
    const auto mapped = config_.host_map.find(slurm_host);
    const auto it = by_host_.find(mapped == config_.host_map.end() ? slurm_host : mapped->second);
    if (it == by_host_.end()) {
      ++j.hosts_unknown;
      if (out.unknown_host_examples.size() < kUnknownHostExamples &&
          std::find(out.unknown_host_examples.begin(), out.unknown_host_examples.end(),
                    slurm_host) == out.unknown_host_examples.end()) {
        out.unknown_host_examples.push_back(slurm_host);
      }
      continue;
    }
    for (const HcaPort& h : it->second) {
      ++j.hca_ports;
      if (const std::size_t i = analysed(h.node, h.port_index); i != kNoPort) j.ports.push_back(i);
      if (h.leaf_node == kNoNode) continue;
      if (const std::size_t i = analysed(h.leaf_node, h.leaf_port_index); i != kNoPort) {
        leaf.push_back(i);
      }
    }
  }
  j.ports.insert(j.ports.end(), leaf.begin(), leaf.end());
  // A host listed twice (Slurm allows it in an expression) counts once.
  std::sort(j.ports.begin(), j.ports.end());
  j.ports.erase(std::unique(j.ports.begin(), j.ports.end()), j.ports.end());
}

namespace {

// What a job's ports stalled this interval, and which exported roots'
// trees they are in.
struct JobStall {
  double seconds = 0;
  std::unordered_map<std::size_t, std::size_t> in_root;  // exported root -> job ports in its tree
};

// W x interval is the stall seconds of the interval, the same
// PortXmitWait-to-seconds conversion as the per-port series
// (analysis/xmit_wait_model.h). Also sets the job's worst W.
JobStall measure_stall(JobPorts& j, const std::vector<PortScore>& ports,
                       const std::vector<PortSample>& samples, const CongestionForest& forest,
                       const std::unordered_map<std::size_t, std::size_t>& root_rank) {
  JobStall stall;
  for (const std::size_t i : j.ports) {
    const PortScore& p = ports[i];
    if (p.valid) {
      stall.seconds += p.stall * samples[i].interval_seconds;
      j.stall_ratio_max = std::max(j.stall_ratio_max, p.stall);
    }
    if (i < forest.root.size() && forest.root[i] != kNoPort) {
      if (const auto r = root_rank.find(forest.root[i]); r != root_rank.end())
        ++stall.in_root[r->second];
    }
  }
  return stall;
}

// The exported roots any job is in, each with its jobs in index order.
void collect_roots(std::vector<RootJobs>& by_root, JobJoinResult& out) {
  for (std::size_t r = 0; r < by_root.size(); ++r) {
    if (by_root[r].jobs.empty()) continue;
    by_root[r].root = r;
    std::sort(by_root[r].jobs.begin(), by_root[r].jobs.end());
    out.roots.push_back(std::move(by_root[r]));
  }
}

}  // namespace

JobJoinResult JobJoin::join(const std::shared_ptr<const Fabric>& fabric,
                            const std::vector<PortScore>& ports,
                            const std::vector<PortSample>& samples, const CongestionForest& forest,
                            const std::shared_ptr<const std::vector<SlurmJob>>& jobs) {
  JobJoinResult out;
  if (!jobs || !fabric) {
    wait_seconds_.clear();
    return out;
  }
  if (fabric != indexed_) {
    index_fabric(*fabric);
    indexed_ = fabric;
  }
  index_analysed(ports);
  // Root port -> its place among the exported roots.
  std::unordered_map<std::size_t, std::size_t> root_rank;
  for (std::size_t r = 0; r < forest.roots.size(); ++r) root_rank.emplace(forest.roots[r].port, r);
  std::vector<RootJobs> by_root(forest.roots.size());

  std::unordered_map<std::uint64_t, double> kept;
  out.jobs.reserve(jobs->size());
  for (const SlurmJob& job : *jobs) {
    JobPorts j;
    j.job_id = job.job_id;
    j.name = job.name;
    j.user = job.user;
    j.partition = job.partition;
    find_ports(job, j, out);
    const JobStall stall = measure_stall(j, ports, samples, forest, root_rank);
    // Summed since the job was first seen.
    const auto before = wait_seconds_.find(j.job_id);
    j.transmit_wait_seconds = (before == wait_seconds_.end() ? 0 : before->second) + stall.seconds;
    kept[j.job_id] = j.transmit_wait_seconds;
    out.unknown_hosts += j.hosts_unknown;
    const std::size_t index = out.jobs.size();
    for (const auto& [root, count] : stall.in_root) by_root[root].jobs.emplace_back(index, count);
    out.jobs.push_back(std::move(j));
  }
  wait_seconds_ = std::move(kept);  // ended jobs are forgotten
  collect_roots(by_root, out);
  return out;
}

std::vector<std::size_t> jobs_on_port(const JobJoinResult& result, std::size_t port) {
  std::vector<std::size_t> jobs;
  for (std::size_t j = 0; j < result.jobs.size(); ++j) {
    const std::vector<std::size_t>& ports = result.jobs[j].ports;
    if (std::find(ports.begin(), ports.end(), port) != ports.end()) jobs.push_back(j);
  }
  return jobs;
}

}  // namespace ibfx
