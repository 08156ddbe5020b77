// The status page at scale: the model, the fabric page and /status.json of
// a scored snapshot of a generated fat tree (default preset_16k(), ~98k
// ports), as the publisher renders them once per sweep. Prints the sizes
// (text and gzip) and the best and worst render times of --runs; issue #27
// wants the page at most 300 kB and rendered in at most 50 ms.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include "analysis/scores.h"
#include "analysis/topology.h"
#include "bench/synthetic_load.h"
#include "http/gzip_writer.h"
#include "snapshot/snapshot.h"
#include "test/sim/cli_args.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fat_tree_flags.h"
#include "views/status_html.h"
#include "views/status_json.h"
#include "views/status_model.h"

using ibfx::bench::Clock;
using ibfx::bench::kInterval;
using ibfx::bench::since;

int main(int argc, char** argv) {
  ibfx::test::FatTreeSpec spec = ibfx::test::preset_16k();
  int runs = 20;
  try {
    ibfx::test::ArgReader args(argc, argv);
    while (args.next()) {
      if (ibfx::test::read_fat_tree_flag(args, spec)) continue;
      if (args.is("--runs")) {
        runs = static_cast<int>(args.integer(1, 1000));
      } else {
        args.unknown();
      }
    }
  } catch (const ibfx::test::UsageError& e) {
    std::cerr << "ibfx_status_page_bench: " << e.what() << "\n";
    return 2;
  }
  auto fabric = std::make_shared<const ibfx::Fabric>(
      ibfx::test::discovered_fabric(ibfx::test::make_fat_tree(spec)));
  const ibfx::Fabric& f = *fabric;
  std::vector<std::string> names;
  for (const auto& n : f.nodes) names.push_back(n.description);
  auto topology = std::make_shared<const ibfx::Topology>(ibfx::classify_topology(f, names, {}));

  // Every linked port: W ~ 0.02 and U ~ 0.4 with noise; one leaf port in
  // 500 full (U 0.99), which stalls the ports into its leaf at W 0.5.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(0.5, 1.5);
  std::vector<std::uint8_t> incast(f.nodes.size(), 0);
  std::vector<ibfx::PortSample> samples;
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (topology->tier[i] == ibfx::Tier::kLeaf && rng() % 32 == 0) incast[i] = 1;
  }
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    for (std::size_t j = 0; j < f.nodes[i].ports.size(); ++j) {
      const ibfx::FabricPort& p = f.nodes[i].ports[j];
      if (!p.linked()) continue;
      double w = 0.02 * noise(rng);
      double u = 0.4 * noise(rng);
      const auto r = static_cast<std::size_t>(p.remote_node);
      if (incast[i] && j == 0) u = 0.99;
      if (incast[r] && topology->tier[i] != ibfx::Tier::kHca) w = 0.5;
      samples.push_back(ibfx::bench::synthetic_sample(i, j, w, u));
    }
  }
  ibfx::SweepResult sweep;
  sweep.nodes.resize(f.nodes.size(),
                     ibfx::NodeSweep{.swept = true, .reached = true, .answered = true});
  sweep.ports_read = f.port_count();
  ibfx::CounterAccumulator accumulator;
  ibfx::SnapshotInputs in;
  in.fabric = fabric;
  in.sweep = &sweep;
  in.accumulator = &accumulator;
  in.node_names = names;
  in.analysis.topology = topology;
  in.analysis.interval_seconds = kInterval;
  in.analysis.samples = samples;
  in.analysis.result = ibfx::analyze(*topology, f, samples, ibfx::ScoreConfig{});
  const auto snapshot = ibfx::build_snapshot(std::move(in));

  std::vector<double> model_s, html_s, json_s, total_s;
  std::string html, json;
  ibfx::StatusModel model;
  for (int r = 0; r < runs; ++r) {
    auto t = Clock::now();
    model = ibfx::build_status_model(*snapshot);
    model_s.push_back(since(t));
    auto t1 = Clock::now();
    html = ibfx::render_status_html(model);
    html_s.push_back(since(t1));
    auto t2 = Clock::now();
    json = ibfx::render_status_json(model);
    json_s.push_back(since(t2));
    total_s.push_back(since(t));
  }
  auto t = Clock::now();
  const std::size_t html_gz = ibfx::gzip_compress(html).size();
  const std::size_t json_gz = ibfx::gzip_compress(json).size();
  const double gzip_s = since(t);
  for (auto* v : {&model_s, &html_s, &json_s, &total_s}) std::sort(v->begin(), v->end());
  std::printf(
      "fabric: %d servers x %d rails, %d tiers: %zu nodes (%zu switches), %zu ports\n"
      "roots: %zu, degraded links: %zu, hottest: %zu\n"
      "page: %zu bytes (%zu gzip), status.json: %zu bytes (%zu gzip)\n"
      "best / worst of %d: model %.2f / %.2f ms, page %.2f / %.2f ms, json %.2f / %.2f ms, "
      "all three %.2f / %.2f ms; gzip of both (default level) %.2f ms\n",
      spec.servers, spec.rails, spec.tiers, f.nodes.size(), model.switches.size(), f.port_count(),
      model.roots.size(), model.degraded_total, model.hottest.size(), html.size(), html_gz,
      json.size(), json_gz, runs, model_s.front() * 1e3, model_s.back() * 1e3, html_s.front() * 1e3,
      html_s.back() * 1e3, json_s.front() * 1e3, json_s.back() * 1e3, total_s.front() * 1e3,
      total_s.back() * 1e3, gzip_s * 1e3);
  return 0;
}
