// Job receipts (issue #44) at 98k ports: what ReceiptTracker::observe adds
// to each sweep with --jobs (default 2,000) running jobs spread over every
// host, against the per-sweep analysis of the same fabric; the memory the
// tracker holds; the cost of finishing every receipt at once; and the
// memory and file bytes per stored receipt. Generated fat tree, no
// simulator; --trees incasts whose roots get 10 senders each (random HCA
// ports, so that most splits name other jobs). No route model: the
// cross-spine share is not part of the figure. Prints the best and worst of
// --runs; docs/benchmarks.md has the figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "analysis/congestion.h"
#include "analysis/scores.h"
#include "analysis/topology.h"
#include "bench/synthetic_load.h"
#include "jobs/job_join.h"
#include "receipts/receipt_json.h"
#include "receipts/receipt_store.h"
#include "receipts/receipt_tracker.h"
#include "test/sim/cli_args.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fat_tree_flags.h"

using ibfx::bench::Clock;
using ibfx::bench::kInterval;
using ibfx::bench::since;

int main(int argc, char** argv) {
  ibfx::test::FatTreeSpec spec = ibfx::test::preset_16k();
  int runs = 10;
  int trees = 16;
  int jobs = 2000;
  try {
    ibfx::test::ArgReader args(argc, argv);
    while (args.next()) {
      if (ibfx::test::read_fat_tree_flag(args, spec)) continue;
      if (args.is("--runs")) {
        runs = static_cast<int>(args.integer(1, 1000));
      } else if (args.is("--jobs")) {
        jobs = static_cast<int>(args.integer(1, 100000));
      } else if (args.is("--trees")) {
        trees = static_cast<int>(args.integer(0, 100000));
      } else {
        args.unknown();
      }
    }
  } catch (const ibfx::test::UsageError& e) {
    std::cerr << "ibfx_receipts_bench: " << e.what() << "\n";
    return 2;
  }
  const auto fabric = std::make_shared<const ibfx::Fabric>(
      ibfx::test::discovered_fabric(ibfx::test::make_fat_tree(spec)));
  const ibfx::Topology topo = ibfx::classify_topology(*fabric, {}, {});

  // Background stall with noise, and `trees` leaves whose every port into
  // an HCA is stalled at 0.5 under a full one: trees with HCA victims.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(0.5, 1.5);
  std::vector<std::size_t> leaves;
  for (std::size_t i = 0; i < fabric->nodes.size(); ++i) {
    if (topo.tier[i] == ibfx::Tier::kLeaf) leaves.push_back(i);
  }
  std::set<std::size_t> hot;
  for (int k = 0; k < trees && !leaves.empty(); ++k) hot.insert(leaves[rng() % leaves.size()]);
  std::vector<ibfx::PortSample> samples;
  for (std::size_t i = 0; i < fabric->nodes.size(); ++i) {
    for (std::size_t j = 0; j < fabric->nodes[i].ports.size(); ++j) {
      const auto& p = fabric->nodes[i].ports[j];
      if (!p.linked()) continue;
      double w = 0.02 * noise(rng);
      double u = 0.4 * noise(rng);
      const auto far = static_cast<std::size_t>(p.remote_node);
      if (topo.tier[i] == ibfx::Tier::kHca && hot.contains(far)) w = 0.5;
      if (hot.contains(i) && j == 0) u = 0.99;
      samples.push_back(ibfx::bench::synthetic_sample(i, j, w, u));
    }
  }
  const ibfx::ScoreConfig config;
  std::vector<double> analyse;
  ibfx::AnalysisResult result;
  for (int r = 0; r < std::min(runs, 3); ++r) {
    auto t = Clock::now();
    result = ibfx::analyze(topo, *fabric, samples, config);
    analyse.push_back(since(t));
  }
  std::sort(analyse.begin(), analyse.end());
  ibfx::SweepAnalysis analysis;
  analysis.topology = std::make_shared<const ibfx::Topology>(topo);
  analysis.interval_seconds = kInterval;
  analysis.result = std::move(result);
  analysis.samples = samples;

  // Each exported root fed by 10 random HCA ports.
  std::vector<std::size_t> hca_ports;
  for (std::size_t p = 0; p < analysis.result.ports.size(); ++p) {
    if (analysis.result.ports[p].tier == ibfx::Tier::kHca) hca_ports.push_back(p);
  }
  ibfx::RouteSweep routes;
  for (std::size_t r = 0; r < analysis.result.congestion.roots.size(); ++r) {
    ibfx::RootSenders s;
    s.root = r;
    for (std::size_t k = 0; k < ibfx::kTopSenders; ++k) {
      s.top.push_back({{}, hca_ports[rng() % hca_ports.size()], 1e9 * noise(rng)});
    }
    routes.senders.push_back(std::move(s));
  }

  // `jobs` jobs over every host in contiguous blocks, joined once.
  ibfx::JobJoin join({});
  std::set<std::string> host_set;
  for (const ibfx::FabricNode& n : fabric->nodes) {
    if (n.type == ibfx::NodeType::kHca) host_set.insert(join.host_of(n.description));
  }
  host_set.erase("");
  const std::vector<std::string> hosts(host_set.begin(), host_set.end());
  auto list = std::make_shared<std::vector<ibfx::SlurmJob>>();
  const std::size_t per_job = std::max<std::size_t>(1, hosts.size() / jobs);
  for (int j = 0; j < jobs; ++j) {
    ibfx::SlurmJob job;
    job.job_id = 1000 + static_cast<std::uint64_t>(j);
    job.name = "job" + std::to_string(j);
    job.user = "user" + std::to_string(j % 50);
    job.partition = "gpu";
    job.start_time = 1'700'000'000 - 3600;
    for (std::size_t h = 0; h < per_job; ++h) {
      job.hosts.push_back(hosts[(static_cast<std::size_t>(j) * per_job + h) % hosts.size()]);
    }
    list->push_back(std::move(job));
  }
  const std::shared_ptr<const std::vector<ibfx::SlurmJob>> jobs_list = list;
  const ibfx::JobJoinResult joined = join.join(fabric, analysis.result.ports, analysis.samples,
                                               analysis.result.congestion, jobs_list);
  std::vector<std::string> names(fabric->nodes.size());
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = fabric->nodes[i].description;
  const ibfx::LinkHealthReport links;

  ibfx::ReceiptTracker tracker;
  ibfx::ReceiptSweepInput in;
  in.jobs = jobs_list;
  in.source_up = true;
  in.join = &joined;
  in.fabric = fabric.get();
  in.node_names = &names;
  in.analysis = &analysis;
  in.routes = &routes;
  in.links = &links;
  double now = 1'700'000'000;
  std::vector<double> observe;
  double first = 0;
  for (int r = 0; r <= runs; ++r) {
    in.now = now;
    in.jobs_polled_at = now;
    const auto t = Clock::now();
    tracker.observe(in);
    (r == 0 ? first : observe.emplace_back()) = since(t);
    now += 60;  // a new minute every sweep: the worst-minute bookkeeping runs
  }
  std::sort(observe.begin(), observe.end());
  const ibfx::ReceiptTrackerStats held = tracker.stats();
  const std::string saved = tracker.save(now);

  // Every job ends at once: a newer list without them.
  in.now = now;
  in.jobs_polled_at = now;
  in.jobs = std::make_shared<const std::vector<ibfx::SlurmJob>>();
  auto t = Clock::now();
  std::vector<ibfx::JobReceipt> done = tracker.observe(in);
  const double finish = since(t);
  std::size_t json_bytes = 0;
  std::size_t other_jobs = 0;
  for (const ibfx::JobReceipt& r : done) {
    json_bytes += ibfx::receipt_to_json(r).size() + 1;
    if (r.verdict == ibfx::ReceiptVerdict::kOtherJobs) ++other_jobs;
  }
  const std::size_t finished = done.size();
  ibfx::ReceiptStore store("", {});
  store.add(std::move(done), now);
  const ibfx::ReceiptStoreStats stored = store.stats();

  std::printf(
      "fabric: %d servers x %d rails: %zu nodes, %zu analysed ports; %zu roots exported\n"
      "analyze (whole per-sweep analysis), best of %d: %.3f s\n"
      "jobs: %d x %zu hosts\n"
      "ReceiptTracker::observe, first sweep (jobs appear): %.4f s\n"
      "  per sweep, best / worst of %d: %.4f / %.4f s = %.2f %% / %.2f %% of the best analysis\n"
      "  tracker memory: %zu running, %.1f MB (%.0f bytes a job); saved state %.1f MB\n"
      "finishing every receipt at once: %.4f s, %zu receipts (%zu other_jobs)\n"
      "stored: %.0f bytes a receipt in memory, %.0f bytes a line in receipts.jsonl\n",
      spec.servers, spec.rails, fabric->nodes.size(), analysis.result.ports.size(),
      analysis.result.congestion.roots.size(), static_cast<int>(analyse.size()), analyse.front(),
      jobs, per_job, first, runs, observe.front(), observe.back(),
      100 * observe.front() / analyse.front(), 100 * observe.back() / analyse.front(), held.running,
      static_cast<double>(held.memory_bytes) / 1e6,
      static_cast<double>(held.memory_bytes) /
          static_cast<double>(std::max<std::size_t>(1, held.running)),
      static_cast<double>(saved.size()) / 1e6, finish, finished, other_jobs,
      static_cast<double>(stored.memory_bytes) /
          static_cast<double>(std::max<std::size_t>(1, stored.receipts)),
      static_cast<double>(json_bytes) / static_cast<double>(std::max<std::size_t>(1, finished)));
  return 0;
}
