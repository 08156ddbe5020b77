// ibfx_route_dump LID...: reads the forwarding tables of the switches at
// the LIDs given through a SweepStage over a UmadTransport, as the daemon's
// sweeps do (run under umad2sim by test/integration/route_reader_test.cpp,
// whose oracle is ibroute), and prints them:
//   switch <lid> top <LinearFDBTop> stale <0|1>
//   <destination lid> <out port>     (every entry but kNoRoute)
// then, on stderr, what the read cost. Exit 0 once every table was read
// whole by a finished full read, 1 if that took more than 60 sweeps.
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "config/config.h"
#include "fabric/fabric.h"
#include "mad/mad_transport.h"
#include "sweep/sweep_stage.h"

int main(int argc, char** argv) {
  try {
    ibfx::Fabric fabric;
    for (int i = 1; i < argc; ++i) {
      ibfx::FabricNode node;
      node.type = ibfx::NodeType::kSwitch;
      node.lid = static_cast<std::uint16_t>(std::stoi(argv[i]));
      node.guid = node.lid;  // any unique key: the tables are printed by LID
      fabric.nodes.push_back(node);
    }
    fabric.index();
    ibfx::Config config;
    config.sweep_interval = std::chrono::milliseconds(200);
    auto transport = std::make_unique<ibfx::UmadTransport>("", 0);
    if (!transport->supports_smp()) {
      std::fprintf(stderr, "no SMP access: %s\n", transport->smp_error().c_str());
      return 2;
    }
    ibfx::SweepStage stage(std::move(transport), config);
    const auto started = std::chrono::steady_clock::now();
    for (int sweep = 1; sweep <= 60; ++sweep) {
      stage.sweep(fabric, ibfx::LocalPort{}, {});
      const ibfx::RouteReaderStats& stats = stage.route_stats();
      const auto tables = stage.routes();
      if (tables && stats.full_reads > 0 && stats.incomplete == 0 && stats.stale == 0) {
        for (const ibfx::SwitchRoutes& s : tables->switches) {
          std::printf("switch %u top %u stale %d\n", s.lid, s.linear_fdb_top, s.stale ? 1 : 0);
          for (std::size_t lid = 0; lid < s.out_port.size(); ++lid) {
            if (s.out_port[lid] != ibfx::kNoRoute) std::printf("%zu %u\n", lid, s.out_port[lid]);
          }
        }
        std::fprintf(
            stderr,
            "sweeps %d smps_sent %llu answered %llu failed %llu cancelled %llu "
            "full_read_seconds %.3f wall_seconds %.3f\n",
            sweep, static_cast<unsigned long long>(stats.smps_sent),
            static_cast<unsigned long long>(stats.smps_answered),
            static_cast<unsigned long long>(stats.smps_failed),
            static_cast<unsigned long long>(stats.smps_cancelled), stats.full_read_seconds,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        return 0;
      }
      std::this_thread::sleep_for(config.sweep_interval);
    }
    std::fprintf(stderr, "the tables were not read whole within 60 sweeps\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibfx_route_dump: %s\n", e.what());
    return 2;
  }
}
