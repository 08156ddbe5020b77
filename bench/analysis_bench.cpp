// The per-sweep analysis alone (stall ratio, utilisation, hotspot scores,
// worst paths, aggregates and the root-or-victim forest) on a generated fat
// tree, without a simulator or a sweep: what the analysis adds to every
// sweep at 98k ports. Prints the best and worst of --runs. With --jobs N
// (default 2,000) also the Slurm job join (jobs/job_join.h) of N running
// jobs spread over every host, the cost issue #28 bounds at 5 % of the
// analysis.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "analysis/congestion.h"
#include "analysis/congestion_events.h"
#include "analysis/scores.h"
#include "analysis/topology.h"
#include "bench/synthetic_load.h"
#include "jobs/job_join.h"
#include "test/sim/cli_args.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fat_tree_flags.h"

using ibfx::bench::Clock;
using ibfx::bench::kInterval;
using ibfx::bench::since;

int main(int argc, char** argv) {
  // The large bench fabric every figure of docs/benchmarks.md is measured on.
  ibfx::test::FatTreeSpec spec = ibfx::test::preset_16k();
  int runs = 5;
  int trees = 16;
  int jobs = 2000;
  try {
    ibfx::test::ArgReader args(argc, argv);
    while (args.next()) {
      if (ibfx::test::read_fat_tree_flag(args, spec)) continue;
      if (args.is("--runs")) {
        runs = static_cast<int>(args.integer(1, 1000));
      } else if (args.is("--jobs")) {
        jobs = static_cast<int>(args.integer(0, 100000));
      } else if (args.is("--trees")) {
        trees = static_cast<int>(args.integer(0, 100000));
      } else {
        args.unknown();
      }
    }
  } catch (const ibfx::test::UsageError& e) {
    std::cerr << "ibfx_analysis_bench: " << e.what() << "\n";
    return 2;
  }
  const auto shared_fabric = std::make_shared<const ibfx::Fabric>(
      ibfx::test::discovered_fabric(ibfx::test::make_fat_tree(spec)));
  const ibfx::Fabric& fabric = *shared_fabric;
  auto t = Clock::now();
  const ibfx::Topology topo = ibfx::classify_topology(fabric, {}, {});
  const double classify = since(t);

  // Background W ~ 0.02 and U ~ 0.4 with noise; `trees` incasts: a leaf
  // port into an HCA full, every port into that leaf stalled at 0.5 and
  // every port into those at 0.3.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(0.5, 1.5);
  std::vector<std::vector<double>> w(fabric.nodes.size()), u(fabric.nodes.size());
  for (std::size_t i = 0; i < fabric.nodes.size(); ++i) {
    w[i].resize(fabric.nodes[i].ports.size());
    u[i].resize(fabric.nodes[i].ports.size());
    for (std::size_t j = 0; j < w[i].size(); ++j) {
      w[i][j] = 0.02 * noise(rng);
      u[i][j] = 0.4 * noise(rng);
    }
  }
  std::vector<std::size_t> leaves;
  for (std::size_t i = 0; i < fabric.nodes.size(); ++i) {
    if (topo.tier[i] == ibfx::Tier::kLeaf) leaves.push_back(i);
  }
  for (int k = 0; k < trees && !leaves.empty(); ++k) {
    const std::size_t leaf = leaves[rng() % leaves.size()];
    for (std::size_t j = 0; j < fabric.nodes[leaf].ports.size(); ++j) {
      const auto& p = fabric.nodes[leaf].ports[j];
      if (!p.linked()) continue;
      const auto r = static_cast<std::size_t>(p.remote_node);
      if (topo.tier[r] == ibfx::Tier::kHca) {
        if (j == 0) u[leaf][j] = 0.99;
        continue;
      }
      for (std::size_t q = 0; q < fabric.nodes[r].ports.size(); ++q) {
        const auto& back = fabric.nodes[r].ports[q];
        if (!back.linked()) continue;
        if (static_cast<std::size_t>(back.remote_node) == leaf) {
          w[r][q] = 0.5;
        } else {
          const auto s = static_cast<std::size_t>(back.remote_node);
          for (std::size_t x = 0; x < fabric.nodes[s].ports.size(); ++x) {
            if (fabric.nodes[s].ports[x].remote_node == static_cast<std::int32_t>(r)) {
              w[s][x] = 0.3;
            }
          }
        }
      }
    }
  }
  std::vector<ibfx::PortSample> samples;
  for (std::size_t i = 0; i < fabric.nodes.size(); ++i) {
    for (std::size_t j = 0; j < w[i].size(); ++j) {
      if (!fabric.nodes[i].ports[j].linked()) continue;
      samples.push_back(ibfx::bench::synthetic_sample(i, j, w[i][j], u[i][j]));
    }
  }

  std::vector<double> analyse, forest;
  ibfx::AnalysisResult result;
  const ibfx::ScoreConfig config;
  for (int r = 0; r < runs; ++r) {
    t = Clock::now();
    result = ibfx::analyze(topo, fabric, samples, config);
    analyse.push_back(since(t));
    t = Clock::now();
    const auto f =
        ibfx::build_congestion_forest(topo, fabric, result.ports, samples, config.congestion);
    forest.push_back(since(t));
  }
  // The congestion events fed that sweep's forest, sweep after sweep (the
  // same trees each time: every event continues): what following the roots
  // over sweeps adds to each one.
  ibfx::SweepAnalysis sweep;
  sweep.topology = std::make_shared<const ibfx::Topology>(topo);
  sweep.interval_seconds = kInterval;
  sweep.result = result;
  sweep.samples = samples;
  std::vector<std::string> names(fabric.nodes.size());
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = fabric.nodes[i].description;
  ibfx::CongestionEventTracker tracker;
  std::vector<double> events;
  for (int r = 0; r < runs; ++r) {
    t = Clock::now();
    tracker.observe(sweep, fabric, names, 1.7e9 + kInterval * r);
    events.push_back(since(t));
  }
  std::sort(events.begin(), events.end());
  std::sort(analyse.begin(), analyse.end());
  std::sort(forest.begin(), forest.end());

  // `jobs` running jobs over every host (the host part of the HCAs' node
  // descriptions), contiguous blocks as Slurm's topology-aware placement
  // gives them, joined to the last analysis. The first join also indexes
  // the fabric (once per discovery); the others are each sweep's cost.
  ibfx::JobJoin join({});
  std::set<std::string> host_set;
  for (const ibfx::FabricNode& n : fabric.nodes) {
    if (n.type == ibfx::NodeType::kHca) host_set.insert(join.host_of(n.description));
  }
  host_set.erase("");
  const std::vector<std::string> hosts(host_set.begin(), host_set.end());
  auto list = std::make_shared<std::vector<ibfx::SlurmJob>>();
  const std::size_t per_job = jobs > 0 ? std::max<std::size_t>(1, hosts.size() / jobs) : 0;
  for (int j = 0; j < jobs; ++j) {
    ibfx::SlurmJob job;
    job.job_id = 1000 + static_cast<std::uint64_t>(j);
    job.name = "job" + std::to_string(j);
    job.user = "user";
    job.partition = "gpu";
    for (std::size_t h = 0; h < per_job; ++h) {
      job.hosts.push_back(hosts[(static_cast<std::size_t>(j) * per_job + h) % hosts.size()]);
    }
    list->push_back(std::move(job));
  }
  const auto forest_of_last =
      ibfx::build_congestion_forest(topo, fabric, result.ports, samples, config.congestion);
  std::vector<double> joins;
  double first_join = 0;
  ibfx::JobJoinResult joined;
  for (int r = 0; r <= runs && jobs > 0; ++r) {
    t = Clock::now();
    joined = join.join(shared_fabric, result.ports, samples, forest_of_last, list);
    if (r == 0) {
      first_join = since(t);
    } else {
      joins.push_back(since(t));
    }
  }
  std::sort(joins.begin(), joins.end());
  std::printf(
      "fabric: %d servers x %d rails, %d tiers: %zu nodes, %zu ports, %zu samples\n"
      "classify_topology (once per discovery): %.3f s\n"
      "analyze (whole per-sweep analysis), best / worst of %d: %.3f / %.3f s\n"
      "  of which the root-or-victim forest: %.3f / %.3f s\n"
      "forest: %zu stalled, %zu saturated, %zu victims, %zu roots exported; first root "
      "%.2f with %zu victims (cause %s)\n"
      "congestion events (CongestionEventTracker::observe), best / worst of %d: %.4f / %.4f s, "
      "%zu events\n",
      spec.servers, spec.rails, spec.tiers, fabric.nodes.size(), fabric.port_count(),
      samples.size(), classify, runs, analyse.front(), analyse.back(), forest.front(),
      forest.back(), result.congestion.stalled, result.congestion.saturated,
      result.congestion.victims, result.congestion.roots.size(),
      result.congestion.roots.empty() ? 0.0 : result.congestion.roots[0].score,
      result.congestion.roots.empty() ? std::size_t{0} : result.congestion.roots[0].victims,
      result.congestion.roots.empty()
          ? "-"
          : std::string(ibfx::cause_name(result.congestion.roots[0].cause)).c_str(),
      runs, events.front(), events.back(), tracker.events()->size());
  if (jobs > 0) {
    std::size_t ports = 0;
    for (const ibfx::JobPorts& j : joined.jobs) ports += j.hca_ports;
    std::printf(
        "job join: %d jobs x %zu hosts, %zu HCA ports, %zu roots with jobs\n"
        "  first join (indexes the fabric, once per discovery): %.4f s\n"
        "  per sweep, best / worst of %d: %.4f / %.4f s = %.2f %% / %.2f %% of the best "
        "analysis\n",
        jobs, per_job, ports, joined.roots.size(), first_join, runs, joins.front(), joins.back(),
        100 * joins.front() / analyse.front(), 100 * joins.back() / analyse.front());
  }
  return 0;
}
