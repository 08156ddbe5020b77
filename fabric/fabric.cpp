#include "fabric/fabric.h"

#include <bit>
#include <cstdio>
#include <cstring>

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

std::string_view port_state_name(std::uint8_t state) {
  switch (state) {
    case 1:
      return "Down";
    case 2:
      return "Initialize";
    case 3:
      return "Armed";
    case 4:
      return "Active";
    default:
      return "unknown";
  }
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
  // IBTA data rate per lane, after line encoding and FEC, as the IBTA
  // roadmap and ibstat state it (4x HDR = 200 Gb/s of data, not 4 x 53.125).
  switch (p.speed_ext_active) {
    case 1:
      return 13.64;  // FDR: 14.0625 Gbaud x 64/66 = 13.64
    case 2:
      return 25;
    case 4:
      return 50;
    case 8:
      return 100;
    case 16:
      return 200;
    default:
      break;
  }
  switch (p.speed_active) {
    case 1:
      return 2;  // SDR: 2.5 Gbaud x 8/10
    case 2:
      return 4;
    case 4:
      return 8;
    default:
      return 0;
  }
}

double link_rate_gbps(const FabricPort& p) {
  // ibstat's "Rate" and sysfs' rate file (kernel ib_rate): the nominal lane
  // rate x lanes, e.g. 4x QDR = 40 and 4x FDR = 56, though their data rates
  // are 32 and 54.5 Gb/s.
  double lane = 0;
  switch (p.speed_ext_active) {
    case 1:
      lane = 14;
      break;
    case 2:
      lane = 25;
      break;
    case 4:
      lane = 50;
      break;
    case 8:
      lane = 100;
      break;
    case 16:
      lane = 200;
      break;
    default:
      lane = p.speed_active == 1 ? 2.5 : p.speed_active == 2 ? 5 : p.speed_active == 4 ? 10 : 0;
      break;
  }
  return lane * link_width_lanes(p.width_active);
}

double link_data_rate_bytes(const FabricPort& p) {
  return link_lane_gbps(p) * link_width_lanes(p.width_active) * 1e9 / 8.0;
}

FabricPort link_enabled_best(const FabricPort& a, const FabricPort& b) {
  FabricPort best;
  // The widest width: bits 1=1x 2=4x 4=8x 8=12x 16=2x are not in lane order.
  const auto widths = static_cast<std::uint8_t>(a.width_enabled & b.width_enabled & 0x1f);
  for (const std::uint8_t w : {8, 4, 2, 16, 1}) {
    if ((widths & w) != 0) {
      best.width_active = w;
      break;
    }
  }
  // Speeds are in rate order: the highest bit. An extended speed (FDR and
  // up) both enable beats any of LinkSpeedEnabled's.
  auto highest = [](unsigned bits) {
    return bits == 0 ? std::uint8_t{0}
                     : static_cast<std::uint8_t>(1u << (std::bit_width(bits) - 1));
  };
  best.speed_ext_active = highest(a.speed_ext_enabled & b.speed_ext_enabled & 0x1fu);
  if (best.speed_ext_active == 0)
    best.speed_active = highest(a.speed_enabled & b.speed_enabled & 0x7u);
  return best;
}

std::string guid_hex(std::uint64_t guid) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

}  // namespace ibfx
