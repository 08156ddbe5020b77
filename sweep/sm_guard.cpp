#include "sweep/sm_guard.h"

namespace ibfx {
namespace {

// Whether one of the node's ports answers at `lid`. Switch ports all answer
// at the switch's LID (port 0); an HCA port at its base LID and, with LMC,
// the 2^LMC LIDs above it, but MasterSMLID and the LIDs the sweep sends to
// are base LIDs (IBA 14.2.5.6), so comparing base LIDs is enough.
bool answers_at(const FabricNode& node, std::uint16_t lid) {
  if (lid == 0) return false;
  if (node.lid == lid) return true;
  for (const FabricPort& p : node.ports) {
    if (p.lid == lid) return true;
  }
  return false;
}

bool in_local_range(const FabricNode& node, const LocalPort& local) {
  if (local.base_lid == 0) return false;
  const unsigned last = local.base_lid + (1u << local.lmc) - 1;
  auto in_range = [&](std::uint16_t lid) { return lid >= local.base_lid && lid <= last; };
  if (node.type == NodeType::kSwitch) return in_range(node.lid);
  for (const FabricPort& p : node.ports) {
    if (p.lid != 0 && in_range(p.lid)) return true;
  }
  return false;
}

}  // namespace

SmGuard::SmGuard(const Fabric& fabric, const LocalPort& local) {
  for (const FabricNode& node : fabric.nodes) {
    if (node.guid == 0) continue;
    for (std::uint16_t sm_lid : {fabric.sm_lid, local.sm_lid}) {
      if (answers_at(node, sm_lid)) {
        add(node.guid, "the master SM's port (MasterSMLID " + std::to_string(sm_lid) + ")");
        break;
      }
    }
    if (node.runs_sm) add(node.guid, "runs a subnet manager (PortInfo:CapabilityMask.IsSM)");
    if (node.guid == fabric.local_node || node.guid == local.node_guid ||
        in_local_range(node, local)) {
      add(node.guid, "this management node's own HCA");
    }
  }
}

void SmGuard::add(std::uint64_t guid, const std::string& why) {
  std::string& reason = reasons_[guid];
  if (!reason.empty()) reason += ", ";
  reason += why;
}

std::string SmGuard::reason(std::uint64_t guid) const {
  const auto it = reasons_.find(guid);
  return it == reasons_.end() ? std::string() : it->second;
}

}  // namespace ibfx
