// A generated fabric as the daemon's discovery would report it, without a
// simulator: for tests and benchmarks of the analysis. Header-only; needs
// ibfx_core (fabric/fabric.h).
#pragma once

#include <cstdint>

#include "fabric/fabric.h"
#include "test/sim/fabric_gen.h"

namespace ibfx::test {

struct DiscoveredLinks {
  std::uint8_t width_active = 2;      // 4x
  std::uint8_t speed_ext_active = 4;  // HDR: 25e9 bytes/s at 4x, the scenario driver's line rate
  std::uint32_t vendor_id = 0;        // 0: no known device, the IBA PortXmitWait unit
  std::uint32_t switch_device_id = 0;
  std::uint32_t hca_device_id = 0;
};

// Every cabled port Active/LinkUp, LIDs in node order; switches list every
// port (uncabled ones down), HCAs only their cabled ones, as ibnetdiscover does.
inline ibfx::Fabric discovered_fabric(const Fabric& spec, const DiscoveredLinks& links = {}) {
  ibfx::Fabric f;
  std::uint16_t next_lid = 1;
  for (const auto& n : spec.nodes()) {
    ibfx::FabricNode node;
    node.guid = 0x0002c90300000000ULL + f.nodes.size() + 1;
    node.type = n.is_switch() ? ibfx::NodeType::kSwitch : ibfx::NodeType::kHca;
    node.description = n.name;
    node.num_ports = static_cast<std::uint8_t>(n.num_ports());
    node.vendor_id = links.vendor_id;
    node.device_id = n.is_switch() ? links.switch_device_id : links.hca_device_id;
    node.lid = next_lid++;
    f.nodes.push_back(std::move(node));
  }
  for (std::size_t i = 0; i < spec.nodes().size(); ++i) {
    const auto& n = spec.nodes()[i];
    for (int p = 1; p <= n.num_ports(); ++p) {
      const auto& ref = n.ports[static_cast<std::size_t>(p)];
      if (!n.is_switch() && !ref.connected()) continue;
      ibfx::FabricPort fp;
      fp.number = static_cast<std::uint8_t>(p);
      fp.lid = f.nodes[i].lid;
      if (ref.connected()) {
        fp.state = 4;
        fp.phys_state = 5;
        fp.width_active = links.width_active;
        fp.speed_active = 4;
        fp.speed_ext_active = links.speed_ext_active;
        fp.remote_node = ref.node;
        fp.remote_port = static_cast<std::uint8_t>(ref.port);
      } else {
        fp.state = 1;
        fp.phys_state = 2;
      }
      f.nodes[i].ports.push_back(fp);
    }
  }
  f.index();
  return f;
}

}  // namespace ibfx::test
