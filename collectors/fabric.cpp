#include "collectors/fabric.h"

#include <cstdio>

namespace ibfx {

std::string_view node_type_name(NodeType t) {
  switch (t) {
    case NodeType::kHca:
      return "hca";
    case NodeType::kSwitch:
      return "switch";
    case NodeType::kRouter:
      return "router";
    case NodeType::kUnknown:
      break;
  }
  return "unknown";
}

void Fabric::index() {
  by_guid.clear();
  by_guid.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    by_guid.emplace(nodes[i].guid, static_cast<std::int32_t>(i));
  }
}

const FabricNode* Fabric::find(std::uint64_t guid) const {
  auto it = by_guid.find(guid);
  return it == by_guid.end() ? nullptr : &nodes[static_cast<std::size_t>(it->second)];
}

std::size_t Fabric::port_count() const {
  std::size_t n = 0;
  for (const auto& node : nodes) n += node.ports.size();
  return n;
}

std::shared_ptr<const Fabric> merge_missing(std::shared_ptr<const Fabric> now,
                                            const Fabric* before) {
  if (before == nullptr || !now) return now;
  std::vector<std::int32_t> missing;
  for (std::size_t i = 0; i < before->nodes.size(); ++i) {
    if (now->find(before->nodes[i].guid) == nullptr) missing.push_back(static_cast<std::int32_t>(i));
  }
  if (missing.empty()) return now;
  auto merged = std::make_shared<Fabric>(*now);
  for (std::int32_t old_index : missing) {
    FabricNode node = before->nodes[static_cast<std::size_t>(old_index)];
    node.present = false;
    node.lid = 0;
    for (FabricPort& p : node.ports) {
      p.lid = 0;
      p.state = 1;       // Down
      p.phys_state = 0;  // unknown: nobody can ask it
    }
    merged->nodes.push_back(std::move(node));
  }
  merged->index();
  // Re-point the retained nodes' links into the merged node list.
  for (std::int32_t old_index : missing) {
    FabricNode& node = merged->nodes[static_cast<std::size_t>(
        merged->by_guid.at(before->nodes[static_cast<std::size_t>(old_index)].guid))];
    for (FabricPort& p : node.ports) {
      if (!p.linked()) continue;
      const std::uint64_t remote_guid = before->nodes[static_cast<std::size_t>(p.remote_node)].guid;
      auto it = merged->by_guid.find(remote_guid);
      p.remote_node = it == merged->by_guid.end() ? kNoNode : it->second;
    }
  }
  return merged;
}

std::string_view link_width_name(std::uint8_t w) {
  switch (w) {
    case 1:
      return "1x";
    case 2:
      return "4x";
    case 4:
      return "8x";
    case 8:
      return "12x";
    case 16:
      return "2x";
    default:
      return "";
  }
}

int link_width_lanes(std::uint8_t w) {
  switch (w) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

std::string_view link_speed_name(const FabricPort& p) {
  // LinkSpeedExtActive (IBA 14.2.5.6) overrides LinkSpeedActive when set.
  switch (p.speed_ext_active) {
    case 1:
      return "FDR";
    case 2:
      return "EDR";
    case 4:
      return "HDR";
    case 8:
      return "NDR";
    case 16:
      return "XDR";
    default:
      break;
  }
  switch (p.speed_active) {
    case 1:
      return "SDR";
    case 2:
      return "DDR";
    case 4:
      return "QDR";
    default:
      return "";
  }
}

double link_lane_gbps(const FabricPort& p) {
  switch (p.speed_ext_active) {
    case 1:
      return 14.0625;
    case 2:
      return 25.78125;
    case 4:
      return 53.125;
    case 8:
      return 106.25;
    case 16:
      return 212.5;
    default:
      break;
  }
  switch (p.speed_active) {
    case 1:
      return 2.5;
    case 2:
      return 5.0;
    case 4:
      return 10.0;
    default:
      return 0;
  }
}

double link_data_rate_bytes(const FabricPort& p) {
  const double encoding = p.speed_ext_active != 0 ? 64.0 / 66.0 : 8.0 / 10.0;
  return link_lane_gbps(p) * link_width_lanes(p.width_active) * encoding * 1e9 / 8.0;
}

std::string guid_hex(std::uint64_t guid) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

}  // namespace ibfx
