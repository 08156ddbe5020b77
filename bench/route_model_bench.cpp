// The route model (issue #41) at 98k ports: building it from every
// switch's forwarding table (the per-port destination and pair counts),
// the sources behind a leaf's up port and behind a port into an HCA, one
// trace, and the memory the tables and the model hold, on a generated fat
// tree (preset_16k) with min-hop tables, without a simulator. Prints the
// best and worst of --runs; docs/benchmarks.md has the figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "analysis/topology.h"
#include "bench/proc_stat.h"
#include "routing/route_balance.h"
#include "routing/route_model.h"
#include "test/sim/cli_args.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fat_tree_flags.h"
#include "test/support/route_tables_builder.h"

using ibfx::bench::process_cpu_seconds;
using ibfx::bench::resident_kib;

namespace {

struct Span {
  double best = 1e9, worst = 0;
  void add(double v) {
    best = std::min(best, v);
    worst = std::max(worst, v);
  }
};

}  // namespace

int main(int argc, char** argv) {
  ibfx::test::FatTreeSpec spec = ibfx::test::preset_16k();
  int runs = 5;
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
    std::cerr << "ibfx_route_model_bench: " << e.what() << "\n";
    return 2;
  }
  const long rss_start = resident_kib();
  const auto fabric = std::make_shared<const ibfx::Fabric>(
      ibfx::test::discovered_fabric(ibfx::test::make_fat_tree(spec)));
  const ibfx::Topology topology = ibfx::classify_topology(*fabric, {}, {});
  const long rss_fabric = resident_kib();
  const auto tables =
      std::make_shared<const ibfx::RouteTables>(ibfx::test::min_hop_tables(*fabric));
  const long rss_tables = resident_kib();
  std::size_t switches = 0;
  std::uint16_t top = 0;
  for (const auto& t : tables->switches) {
    ++switches;
    top = std::max(top, t.linear_fdb_top);
  }
  std::printf("fabric: %zu nodes, %zu ports, %zu switches, LinearFDBTop %u\n", fabric->nodes.size(),
              fabric->port_count(), switches, unsigned{top});
  std::size_t table_bytes = 0;
  for (const auto& t : tables->switches) table_bytes += t.out_port.capacity() + sizeof(t);
  std::printf("tables: %.1f MB (one byte per LID per switch)\n",
              static_cast<double>(table_bytes) / (1024.0 * 1024.0));

  Span build_cpu, build_wall, up_sources, hca_sources, balance;
  std::shared_ptr<const ibfx::RouteModel> model;
  long rss_model = 0;
  for (int r = 0; r < runs; ++r) {
    model.reset();
    const double c0 = process_cpu_seconds();
    const auto t0 = ibfx::bench::Clock::now();
    model = ibfx::RouteModel::build(fabric, tables);
    build_wall.add(ibfx::bench::since(t0));
    build_cpu.add(process_cpu_seconds() - c0);
    if (r == 0) rss_model = resident_kib();
    // A leaf's first up port, and its first port into an HCA.
    std::int32_t leaf = ibfx::kNoNode;
    std::uint8_t up = 0, down = 0;
    for (std::size_t n = 0; n < fabric->nodes.size() && leaf == ibfx::kNoNode; ++n) {
      if (topology.tier[n] != ibfx::Tier::kLeaf) continue;
      for (std::size_t i = 0; i < fabric->nodes[n].ports.size(); ++i) {
        const auto d = topology.direction[n][i];
        if (d == ibfx::PortDirection::kUp && up == 0) up = fabric->nodes[n].ports[i].number;
        if (d == ibfx::PortDirection::kDown && down == 0) down = fabric->nodes[n].ports[i].number;
      }
      leaf = static_cast<std::int32_t>(n);
    }
    const double c1 = process_cpu_seconds();
    const auto up_senders = model->sources_through(leaf, up);
    up_sources.add(process_cpu_seconds() - c1);
    const double c2 = process_cpu_seconds();
    const auto hca_senders = model->sources_through(leaf, down);
    hca_sources.add(process_cpu_seconds() - c2);
    const double c3 = process_cpu_seconds();
    const auto b = ibfx::route_balance(*model, topology);
    balance.add(process_cpu_seconds() - c3);
    if (r == 0) {
      std::printf(
          "model: %zu HCA ports, %zu destination LIDs, %llu broken entries; "
          "%zu sources behind a leaf up port, %zu behind a port into an HCA; "
          "%zu switches balanced\n",
          model->stats().hca_ports, model->stats().destination_lids,
          static_cast<unsigned long long>(model->stats().broken_routes), up_senders.size(),
          hca_senders.size(), b.size());
    }
  }
  std::printf("model build: cpu %.3f..%.3f s, wall %.3f..%.3f s\n", build_cpu.best, build_cpu.worst,
              build_wall.best, build_wall.worst);
  std::printf("sources_through: leaf up port %.3f..%.3f s, port into an HCA %.3f..%.3f s\n",
              up_sources.best, up_sources.worst, hca_sources.best, hca_sources.worst);
  std::printf("route_balance: %.4f..%.4f s\n", balance.best, balance.worst);
  std::printf(
      "memory: model %.1f MB of its own; resident growth: fabric %.1f MB, tables %.1f MB "
      "(with the generator's scratch), model %.1f MB\n",
      static_cast<double>(model->memory_bytes()) / (1024.0 * 1024.0),
      static_cast<double>(rss_fabric - rss_start) / 1024,
      static_cast<double>(rss_tables - rss_fabric) / 1024,
      static_cast<double>(rss_model - rss_tables) / 1024);
  return 0;
}
