// The discovered fabric: nodes, ports, links. Immutable once published; the
// sweep and the analysis read it through shared_ptr<const Fabric>.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ibfx {

enum class NodeType : std::uint8_t { kUnknown, kHca, kSwitch, kRouter };
std::string_view node_type_name(NodeType t);  // "hca", "switch", "router", "unknown"

inline constexpr std::int32_t kNoNode = -1;

struct FabricPort {
  std::uint8_t number = 0;
  std::uint16_t lid = 0;  // LID that addresses this port's PMA (switch: the node's LID)
  // PortInfo:LMC (IBA 14.2.5.6, 3 bits): the port answers at 2^lmc LIDs,
  // lid .. lid + 2^lmc - 1, so a forwarding table routes all of them to it.
  // A switch has one LID, its port 0's, and so one LMC: every port of a
  // switch carries port 0's, as it carries its LID (the external ports'
  // own LMC field is reserved).
  std::uint8_t lmc = 0;
  // PortInfo (IBA 14.2.5.6): PortState 1=Down 2=Init 3=Armed 4=Active;
  // PortPhysicalState 5=LinkUp.
  std::uint8_t state = 0;
  std::uint8_t phys_state = 0;
  std::uint8_t width_active = 0;      // LinkWidthActive bit (1=1x 2=4x 4=8x 8=12x 16=2x)
  std::uint8_t speed_active = 0;      // LinkSpeedActive (1=SDR 2=DDR 4=QDR)
  std::uint8_t speed_ext_active = 0;  // LinkSpeedExtActive (1=FDR 2=EDR 4=HDR 8=NDR 16=XDR)
  // What the port may train at (PortInfo LinkWidthEnabled, LinkSpeedEnabled,
  // LinkSpeedExtEnabled; bits as the Active fields, several may be set; 0:
  // not known): a link below what both of its ends enable is degraded.
  std::uint8_t width_enabled = 0;
  std::uint8_t speed_enabled = 0;
  std::uint8_t speed_ext_enabled = 0;
  // PortInfo:LinkRoundTripLatency (IBA 14.2.5.6, 24 bits): the round trip
  // of the link as the port measured it, in ns; 0: not known (ibsim and
  // some devices report 0). About 5 ns per metre of cable each way, so
  // parallel cables of one length agree and a longer one stands out.
  std::uint32_t link_round_trip_ns = 0;
  std::int32_t remote_node = kNoNode;  // index into Fabric::nodes
  std::uint8_t remote_port = 0;

  // How many LIDs the port answers at: 2^LMC, from lid on.
  unsigned lid_count() const { return 1u << (lmc & 7u); }
  bool linked() const { return remote_node != kNoNode; }
  bool up() const { return state >= 2 && phys_state == 5; }
};

struct FabricNode {
  std::uint64_t guid = 0;
  NodeType type = NodeType::kUnknown;
  std::string description;  // NodeDescription as the node reports it
  std::uint16_t lid = 0;    // switch: port 0 LID; HCA: first port with a LID
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::uint8_t num_ports = 0;
  // False for a node that earlier discoveries found and the latest did not
  // (a lost SMP, or really unplugged): kept as last seen and still swept,
  // so that its series do not silently vanish (see FabricMerger).
  bool present = true;
  // PortInfo:CapabilityMask.IsSM (IBA 14.2.5.6, bit 1) on one of its ports
  // (a switch: port 0): a subnet manager, master or standby, is bound there.
  bool runs_sm = false;
  std::vector<FabricPort> ports;  // discovered ports, ascending by number (no switch port 0)
};

struct Fabric {
  std::vector<FabricNode> nodes;
  std::unordered_map<std::uint64_t, std::int32_t> by_guid;
  std::chrono::system_clock::time_point discovered_at{};
  double discovery_seconds = 0;
  // The node discovery started from: this management node's own HCA (0 when
  // unknown), and PortInfo:MasterSMLID of the local port it used, the LID
  // of the port the master SM is bound to (0 when unknown).
  std::uint64_t local_node = 0;
  std::uint16_t sm_lid = 0;
  // PortInfo:PortState (IBA 14.2.5.6) of that local port as the discovery
  // read it: 1 Down, 2 Initialize, 3 Armed, 4 Active; 0 unknown. Below
  // Active no PMA MAD passes (the SM has not brought the port up): the one
  // fact that explains a fabric of which nothing answers.
  std::uint8_t local_port_state = 0;
  // SMPs of the discovery that got no answer after their retries, and that
  // were answered with an error status: a discovery that lost any is
  // partial (whatever it could not reach behind them is missing).
  std::uint32_t smp_timeouts = 0;
  std::uint32_t smp_errors = 0;

  void index();  // rebuilds by_guid
  const FabricNode* find(std::uint64_t guid) const;
  std::size_t port_count() const;
};

// PortInfo:PortState (IBA 14.2.5.6) in words, as ibstat prints them:
// "Down", "Initialize", "Armed", "Active"; "unknown" for anything else.
std::string_view port_state_name(std::uint8_t state);
// Link properties as words and numbers.
std::string_view link_width_name(std::uint8_t width_active);  // "4x"
int link_width_lanes(std::uint8_t width_active);
std::string_view link_speed_name(const FabricPort& p);  // "SDR".."XDR", "" if unknown
// IBTA data rate per lane in Gb/s (SDR 2, DDR 4, QDR 8, FDR 13.64, EDR 25,
// HDR 50, NDR 100, XDR 200; 0 if unknown) and the link's data rate in
// bytes/s (4x HDR = 25e9): what utilisation and stall time are measured in.
double link_lane_gbps(const FabricPort& p);
double link_data_rate_bytes(const FabricPort& p);
// The link rate as ibstat and sysfs print it, in Gb/s: 4x HDR 200, 4x QDR 40.
double link_rate_gbps(const FabricPort& p);

// The highest width and speed both ends of a cable enable (PortInfo
// LinkWidthEnabled, LinkSpeedEnabled, LinkSpeedExtEnabled, IBA 14.2.5.6),
// as a port that trained at them: its *_active fields set, one bit each
// (width_active 0 when the ends enable no common width or one end's are not
// known; speed fields 0 likewise). What the link should have trained at.
FabricPort link_enabled_best(const FabricPort& a, const FabricPort& b);

// Hex GUID label "0x0002c90300a1b2c3".
std::string guid_hex(std::uint64_t guid);

}  // namespace ibfx
