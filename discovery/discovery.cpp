#include "discovery/discovery.h"

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>

#include <chrono>
#include <cstring>

namespace ibfx {
namespace {

NodeType to_node_type(int t) {
  switch (t) {
    case IB_NODE_CA:
      return NodeType::kHca;
    case IB_NODE_SWITCH:
      return NodeType::kSwitch;
    case IB_NODE_ROUTER:
      return NodeType::kRouter;
    default:
      return NodeType::kUnknown;
  }
}

std::string trimmed_description(const char* desc) {
  std::string s(desc, strnlen(desc, IB_SMP_DATA_SIZE));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

// PortInfo:CapabilityMask (IBA 14.2.5.6) bits.
constexpr std::uint32_t kCapIsSm = 1u << 1;
constexpr std::uint32_t kCapIsExtendedSpeeds = 1u << 14;

// Whether a subnet manager is bound to one of the node's ports: IsSM is set
// by the SMA of the port an SM registered on (through the issm device,
// libibumad umad_open_sm_port()). A switch reports CapabilityMask on port 0
// only; an HCA per port.
bool runs_sm(const ibnd_node_t* node) {
  if (node->ports == nullptr) return false;
  for (int i = node->type == IB_NODE_SWITCH ? 0 : 1; i <= node->numports; ++i) {
    const ibnd_port_t* p = node->ports[i];
    if (p == nullptr) continue;
    auto* info = const_cast<std::uint8_t*>(p->info);
    if (mad_get_field(info, 0, IB_PORT_CAPMASK_F) & kCapIsSm) return true;
    if (node->type == IB_NODE_SWITCH) break;
  }
  return false;
}

FabricPort to_port(const ibnd_node_t* node, const ibnd_port_t* p) {
  // LinkSpeedExt* are only meaningful when PortInfo.CapabilityMask has
  // IsExtendedSpeedsSupported (bit 14). A switch reports CapabilityMask on
  // port 0 only (IBA 14.2.5.6).
  const std::uint8_t* cap_info = p->info;
  const bool switch_port0 =
      node->type == IB_NODE_SWITCH && node->ports != nullptr && node->ports[0] != nullptr;
  if (switch_port0) cap_info = node->ports[0]->info;
  const bool extended = (mad_get_field(const_cast<std::uint8_t*>(cap_info), 0, IB_PORT_CAPMASK_F) &
                         kCapIsExtendedSpeeds) != 0;
  FabricPort fp = port_from_port_info(p->info, extended);
  fp.number = static_cast<std::uint8_t>(p->portnum);
  fp.lid = node->type == IB_NODE_SWITCH ? node->smalid : p->base_lid;
  // A switch's external ports have no LID of their own and their LMC field
  // is reserved: the LID range is port 0's (IBA 14.2.5.6), 0 when its
  // PortInfo was lost, as the LID then is.
  if (node->type == IB_NODE_SWITCH) {
    fp.lmc = switch_port0 ? port_from_port_info(cap_info, false).lmc : 0;
  }
  return fp;
}

}  // namespace

FabricPort port_from_port_info(const std::uint8_t* port_info, bool extended_speeds) {
  // libibmad's getters take a non-const buffer; they only read it.
  auto* info = const_cast<std::uint8_t*>(port_info);
  auto field = [info](MAD_FIELDS f) {
    return static_cast<std::uint8_t>(mad_get_field(info, 0, f));
  };
  FabricPort fp;
  fp.state = field(IB_PORT_STATE_F);
  fp.phys_state = field(IB_PORT_PHYS_STATE_F);
  fp.lmc = field(IB_PORT_LMC_F);
  fp.width_active = field(IB_PORT_LINK_WIDTH_ACTIVE_F);
  fp.width_enabled = field(IB_PORT_LINK_WIDTH_ENABLED_F);
  fp.speed_active = field(IB_PORT_LINK_SPEED_ACTIVE_F);
  fp.speed_enabled = field(IB_PORT_LINK_SPEED_ENABLED_F);
  // 24 bits: mad_get_field's uint32_t, not the 8-bit helper above.
  fp.link_round_trip_ns = mad_get_field(info, 0, IB_PORT_LINK_ROUND_TRIP_F);
  if (extended_speeds) {
    fp.speed_ext_active = field(IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
    fp.speed_ext_enabled = field(IB_PORT_LINK_SPEED_EXT_ENABLED_F);
  }
  return fp;
}

Discovery::Discovery(std::string ca, int ca_port, DiscoveryConfig config)
    : ca_(std::move(ca)), ca_port_(ca_port), config_(config) {}

DiscoveryResult Discovery::discover() const {
  const auto start = std::chrono::steady_clock::now();
  ibnd_config_t cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.max_smps = static_cast<unsigned>(config_.max_smps);
  cfg.timeout_ms = static_cast<unsigned>(config_.timeout.count());
  cfg.retries = static_cast<unsigned>(config_.retries);
  std::string ca = ca_;
  ibnd_fabric_t* raw =
      ibnd_discover_fabric(ca.empty() ? nullptr : ca.data(), ca_port_, nullptr, &cfg);
  if (raw == nullptr) return {nullptr, "libibnetdisc: fabric discovery failed"};

  auto fabric = std::make_shared<Fabric>();
  std::unordered_map<const ibnd_node_t*, std::int32_t> index;
  for (ibnd_node_t* n = raw->nodes; n != nullptr; n = n->next) {
    index.emplace(n, static_cast<std::int32_t>(fabric->nodes.size()));
    FabricNode node;
    node.guid = n->guid;
    node.type = to_node_type(n->type);
    node.description = trimmed_description(n->nodedesc);
    node.num_ports = static_cast<std::uint8_t>(n->numports);
    node.vendor_id = mad_get_field(n->info, 0, IB_NODE_VENDORID_F);
    node.device_id = mad_get_field(n->info, 0, IB_NODE_DEVID_F);
    node.lid = n->type == IB_NODE_SWITCH ? n->smalid : 0;
    node.runs_sm = runs_sm(n);
    fabric->nodes.push_back(std::move(node));
  }
  for (ibnd_node_t* n = raw->nodes; n != nullptr; n = n->next) {
    FabricNode& node = fabric->nodes[static_cast<std::size_t>(index[n])];
    if (n->ports == nullptr) continue;
    for (int i = 1; i <= n->numports; ++i) {
      const ibnd_port_t* p = n->ports[i];
      if (p == nullptr) continue;
      FabricPort fp = to_port(n, p);
      if (p->remoteport != nullptr && p->remoteport->node != nullptr) {
        auto it = index.find(p->remoteport->node);
        if (it != index.end()) {
          fp.remote_node = it->second;
          fp.remote_port = static_cast<std::uint8_t>(p->remoteport->portnum);
        }
      }
      if (node.lid == 0 && fp.lid != 0) node.lid = fp.lid;
      node.ports.push_back(fp);
    }
  }
  // Who we are and where the master SM is, as the local port says
  // (PortInfo:MasterSMLID): the sweep keeps its optional MADs away from
  // both (sweep/sm_guard.h).
  if (const ibnd_node_t* from = raw->from_node; from != nullptr) {
    fabric->local_node = from->guid;
    if (from->ports != nullptr && raw->from_portnum >= 0 && raw->from_portnum <= from->numports &&
        from->ports[raw->from_portnum] != nullptr) {
      auto* info = const_cast<std::uint8_t*>(from->ports[raw->from_portnum]->info);
      fabric->sm_lid = static_cast<std::uint16_t>(mad_get_field(info, 0, IB_PORT_SMLID_F));
      fabric->local_port_state = static_cast<std::uint8_t>(mad_get_field(info, 0, IB_PORT_STATE_F));
    }
  }
  ibnd_destroy_fabric(raw);
  fabric->index();
  fabric->discovered_at = std::chrono::system_clock::now();
  fabric->discovery_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {std::move(fabric), {}};
}

}  // namespace ibfx
