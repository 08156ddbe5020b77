// Link health (issue #34) at 98k ports: what LinkHealthTracker::observe adds
// to each sweep, its first sweep after a discovery (the per-port memory and
// the slow-link peers), and the memory it holds, on a generated fat tree
// without a simulator. Every port read each sweep; --erring ports take
// symbol errors (BER about 1e-11), so that many links hold a BER window.
// Prints the best and worst of --runs; docs/benchmarks.md has the figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "analysis/topology.h"
#include "bench/synthetic_load.h"
#include "fabric/counter_accumulator.h"
#include "links/link_health_tracker.h"
#include "test/sim/cli_args.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fat_tree_flags.h"

using ibfx::bench::Clock;
using ibfx::bench::process_cpu_seconds;
using ibfx::bench::resident_kib;
using ibfx::bench::since;

int main(int argc, char** argv) {
  ibfx::test::FatTreeSpec spec = ibfx::test::preset_16k();
  int runs = 10;
  int erring = 1000;
  try {
    ibfx::test::ArgReader args(argc, argv);
    while (args.next()) {
      if (ibfx::test::read_fat_tree_flag(args, spec)) continue;
      if (args.is("--runs")) {
        runs = static_cast<int>(args.integer(2, 1000));
      } else if (args.is("--erring")) {
        erring = static_cast<int>(args.integer(0, 1000000));
      } else {
        args.unknown();
      }
    }
  } catch (const ibfx::test::UsageError& e) {
    std::cerr << "ibfx_link_health_bench: " << e.what() << "\n";
    return 2;
  }
  const auto fabric = std::make_shared<const ibfx::Fabric>(
      ibfx::test::discovered_fabric(ibfx::test::make_fat_tree(spec)));
  const ibfx::Topology topology = ibfx::classify_topology(*fabric, {}, {});
  std::vector<std::vector<bool>> read(fabric->nodes.size());
  std::vector<ibfx::PortKey> keys;
  for (std::size_t n = 0; n < fabric->nodes.size(); ++n) {
    read[n].assign(fabric->nodes[n].ports.size(), true);
    for (const ibfx::FabricPort& p : fabric->nodes[n].ports) {
      keys.push_back({fabric->nodes[n].guid, p.number});
    }
  }
  // PortCounters as a sweep reads them (IBA 16.1.3.5 widths).
  ibfx::CounterAccumulator acc;
  auto apply = [&](int sweep) {
    for (std::size_t k = 0; k < keys.size(); ++k) {
      ibfx::CounterReading r;
      const bool errs = erring > 0 && k % (keys.size() / static_cast<std::size_t>(erring) + 1) == 0;
      r.set(ibfx::Counter::kSymbolErrors, errs ? static_cast<std::uint64_t>(sweep) * 2 : 0, 16);
      r.set(ibfx::Counter::kLinkErrorRecovery, 0, 8);
      r.set(ibfx::Counter::kLinkDowned, 0, 8);
      r.set(ibfx::Counter::kLocalLinkIntegrityErrors, 0, 4);
      r.set(ibfx::Counter::kExcessiveBufferOverrunErrors, 0, 4);
      acc.apply(keys[k], r, {});
    }
  };
  apply(0);  // the accumulator's own memory, before the tracker's
  const long before = resident_kib();
  ibfx::LinkHealthTracker tracker;
  const ibfx::LinkHealthConfig config;
  std::vector<double> times, cpu;
  double first = 0, first_cpu = 0;
  std::shared_ptr<const ibfx::LinkHealthReport> report;
  for (int s = 0; s <= runs; ++s) {
    if (s > 0) apply(s);
    const auto t = Clock::now();
    const double c = process_cpu_seconds();
    report = tracker.observe(fabric, &topology, acc, read, 1.7e9 + 10.0 * s, config);
    (s == 0 ? first_cpu : cpu.emplace_back()) = process_cpu_seconds() - c;
    (s == 0 ? first : times.emplace_back()) = since(t);
  }
  const long after = resident_kib();
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf(
      "fabric: %zu nodes, %zu ports; %d erring ports\n"
      "LinkHealthTracker::observe, first sweep of a fabric: %.4f s wall, %.4f s CPU\n"
      "LinkHealthTracker::observe, best / worst of %d: %.4f / %.4f s wall, %.4f / %.4f s CPU\n"
      "unhealthy links %zu, links holding state %zu, sparse BER series %zu\n"
      "memory: tracker's own estimate %.1f MiB (%.0f bytes/port); resident growth over the "
      "runs %.1f MiB\n",
      fabric->nodes.size(), fabric->port_count(), erring, first, first_cpu, runs, times.front(),
      times.back(), cpu.front(), cpu.back(), report->links.size(), report->tracked,
      report->port_ber.size(), static_cast<double>(report->memory_bytes) / (1 << 20),
      static_cast<double>(report->memory_bytes) / static_cast<double>(fabric->port_count()),
      static_cast<double>(after - before) / 1024);
  return 0;
}
