// The status page at scale: the model, the fabric page and /status.json of
// a scored snapshot of a generated fat tree (default preset_16k(), ~98k
// ports), as the publisher renders them once per sweep. Prints the sizes
// (text and gzip) and the best and worst render times of --runs; issue #27
// wants the page at most 300 kB and rendered in at most 50 ms. Then the
// page's history (issue #35): 24 h of sweeps at a 10 s interval (each with
// as many unhealthy links as a frame keeps) recorded
// into a HistoryRing at the default settings (its memory, at most 64 MB
// wanted, and the time a sweep's record takes), the page with the heatmap
// over time (1 h, 24 h), a page ?at= 12 h ago, /history.json of the last
// hour and the state file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include "analysis/scores.h"
#include "analysis/topology.h"
#include "bench/proc_stat.h"
#include "bench/synthetic_load.h"
#include "history/history_json.h"
#include "history/history_ring.h"
#include "history/history_state.h"
#include "http/gzip_writer.h"
#include "snapshot/snapshot.h"
#include "test/sim/cli_args.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fat_tree_flags.h"
#include "views/history_capture.h"
#include "views/history_status_model.h"
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
  // The history: 24 h of sweeps, a moving hot spot so that frames differ.
  const long rss_before = ibfx::bench::resident_kib();
  ibfx::HistoryRing ring;
  const double t0 = 1764720000;
  const int sweeps = 24 * 360;
  std::vector<double> record_s;
  ibfx::StatusModel moving = model;
  // The worst case for the links each frame keeps: as many unhealthy links
  // as a frame holds, in every sweep, with names as long as the fabric's.
  moving.links.clear();
  for (std::size_t i = 0; i < ibfx::kHistoryMaxLinks; ++i) {
    ibfx::StatusLinkHealth l;
    l.node = {0x7cfe900300000000 + i, "gpu" + std::to_string(1000 + i) + " mlx5_3", 1, true, 0};
    l.remote = {0x7cfe900300010000 + i, "leaf-r3-" + std::to_string(100 + i), 17, true, 0};
    l.condition = "ber_warning";
    l.conditions = {l.condition};
    l.symbol_ber = 3.2e-13;
    l.since = t0;
    moving.links.push_back(std::move(l));
  }
  moving.links_total = moving.links.size();
  for (int k = 0; k < sweeps; ++k) {
    moving.sweep.timestamp_seconds = t0 + 10.0 * k;
    for (std::size_t i = 0; i < moving.switches.size(); ++i) {
      moving.switches[i].stall = model.switches[i].stall * noise(rng);
    }
    const auto tr = Clock::now();
    ring.record(ibfx::make_history_frame(moving, *snapshot, ring.table()));
    record_s.push_back(since(tr));
  }
  const long rss_after = ibfx::bench::resident_kib();
  std::sort(record_s.begin(), record_s.end());
  const auto frames = ring.frames();
  ibfx::StatusModel with_history = model;
  with_history.history = frames;
  std::vector<double> page_1h, page_24h, at_s, hjson_s;
  std::string page_h, page_d, page_at, hjson;
  for (int r = 0; r < runs; ++r) {
    auto th = Clock::now();
    with_history.history_window_seconds = 3600;
    page_h = ibfx::render_status_html(with_history);
    page_1h.push_back(since(th));
    th = Clock::now();
    with_history.history_window_seconds = 86400;
    page_d = ibfx::render_status_html(with_history);
    page_24h.push_back(since(th));
    th = Clock::now();
    const double at = t0 + 12 * 3600;
    ibfx::StatusModel past = ibfx::history_status_model(*frames->at(at), at, nullptr);
    past.history = frames;
    page_at = ibfx::render_status_html(past);
    at_s.push_back(since(th));
    th = Clock::now();
    const double newest = frames->frames.back()->time;
    hjson = ibfx::render_history_json(*frames, newest - 3600, newest, 0);
    hjson_s.push_back(since(th));
  }
  for (auto* v : {&page_1h, &page_24h, &at_s, &hjson_s}) std::sort(v->begin(), v->end());
  auto te = Clock::now();
  const std::string state = ibfx::encode_history_state(*frames, t0);
  const double encode_s = since(te);
  te = Clock::now();
  std::vector<ibfx::HistoryFramePtr> decoded;
  std::string error;
  const bool ok = ibfx::decode_history_state(state, decoded, error);
  const double decode_s = since(te);
  std::printf(
      "history: %d sweeps (24 h at 10 s): %zu frames, %.1f MB counted (RSS +%.1f MB); record "
      "median %.3f ms, worst %.3f ms\n"
      "page with the heatmap over time: 1 h %zu bytes (%zu gzip) in %.2f / %.2f ms, 24 h %zu "
      "bytes in %.2f / %.2f ms; ?at= 12 h ago %zu bytes in %.2f / %.2f ms\n"
      "/history.json of the last hour: %zu bytes in %.2f / %.2f ms; state file %.1f MB, encode "
      "%.0f ms, decode %.0f ms (%s)\n",
      sweeps, frames->frames.size(), static_cast<double>(ring.bytes()) / (1 << 20),
      static_cast<double>(rss_after - rss_before) / 1024, record_s[record_s.size() / 2] * 1e3,
      record_s.back() * 1e3, page_h.size(), ibfx::gzip_compress(page_h).size(),
      page_1h.front() * 1e3, page_1h.back() * 1e3, page_d.size(), page_24h.front() * 1e3,
      page_24h.back() * 1e3, page_at.size(), at_s.front() * 1e3, at_s.back() * 1e3, hjson.size(),
      hjson_s.front() * 1e3, hjson_s.back() * 1e3, static_cast<double>(state.size()) / (1 << 20),
      encode_s * 1e3, decode_s * 1e3, ok ? "ok" : error.c_str());
  return 0;
}
