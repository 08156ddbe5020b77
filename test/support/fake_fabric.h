// Hand-built ibfx::Fabric models for unit tests.
#pragma once

#include <chrono>

#include "fabric/fabric.h"
#include "fabric/sweep_result.h"

namespace ibfx::test {

// One switch (LID 1, GUID 0x100) with `hcas` HCAs on ports 1..hcas (LIDs
// 2.., GUIDs 0x200..), plus `spare` unlinked switch ports.
inline ibfx::Fabric star_fabric(int hcas, int spare = 0) {
  ibfx::Fabric f;
  ibfx::FabricNode sw;
  sw.guid = 0x100;
  sw.type = NodeType::kSwitch;
  sw.description = "leaf-01";
  sw.lid = 1;
  sw.num_ports = static_cast<std::uint8_t>(hcas + spare);
  f.nodes.push_back(sw);
  for (int i = 0; i < hcas; ++i) {
    ibfx::FabricNode h;
    h.guid = 0x200 + static_cast<std::uint64_t>(i);
    h.type = NodeType::kHca;
    h.description = "gpu" + std::to_string(i) + " mlx5_0";
    h.lid = static_cast<std::uint16_t>(2 + i);
    h.num_ports = 1;
    ibfx::FabricPort hp;
    hp.number = 1;
    hp.lid = h.lid;
    hp.state = 4;
    hp.phys_state = 5;
    hp.width_active = 2;
    hp.speed_active = 1;
    hp.remote_node = 0;
    hp.remote_port = static_cast<std::uint8_t>(i + 1);
    h.ports.push_back(hp);
    f.nodes.push_back(h);

    ibfx::FabricPort sp = hp;
    sp.number = static_cast<std::uint8_t>(i + 1);
    sp.lid = 1;
    sp.remote_node = static_cast<std::int32_t>(f.nodes.size() - 1);
    sp.remote_port = 1;
    f.nodes[0].ports.push_back(sp);
  }
  for (int i = 0; i < spare; ++i) {
    ibfx::FabricPort sp;
    sp.number = static_cast<std::uint8_t>(hcas + i + 1);
    sp.lid = 1;
    sp.state = 1;
    sp.phys_state = 2;
    f.nodes[0].ports.push_back(sp);
  }
  f.index();
  return f;
}

// A sweep of `fabric` at `at` in which every node answered and every port
// was read.
inline ibfx::SweepResult swept_whole(const ibfx::Fabric& fabric,
                                     std::chrono::system_clock::time_point at) {
  ibfx::SweepResult sweep;
  sweep.started_at = at;
  for (const ibfx::FabricNode& node : fabric.nodes) {
    sweep.port_read.emplace_back(node.ports.size(), true);
    sweep.nodes.push_back(ibfx::NodeSweep{.swept = true, .reached = true, .answered = true});
  }
  return sweep;
}

}  // namespace ibfx::test
