// The two Subnet Management attributes the route reader (sweep/route_reader.h)
// asks every switch's SMA for, with LID-routed SMP Gets only: SwitchInfo
// (IBA 14.2.5.4) for the size of the unicast forwarding table, and its
// LinearForwardingTable blocks (IBA 14.2.5.10). Decoded here so that
// libibmad's field tables stay in this layer, as NodeInfo's do
// (mad/mad_transport.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "mad/pma.h"

namespace ibfx {

inline constexpr std::uint16_t kAttrSwitchInfo = 0x0012;
inline constexpr std::uint16_t kAttrLinearForwardingTable = 0x0019;
// IBA 14.2.5.10: each LinearForwardingTable block is 64 one-byte port
// numbers; the attribute modifier is the block number (LIDs 64*b..64*b+63).
inline constexpr std::size_t kLftEntriesPerBlock = 64;
// The highest unicast LID (IBA 4.1.3: 0x0001-0xBFFF unicast, above it
// multicast): a LinearFDBTop beyond it can only be a broken answer.
inline constexpr std::uint16_t kMaxUnicastLid = 0xBFFF;

struct SmpSwitchInfo {
  std::uint16_t linear_fdb_cap = 0;  // LinearFDBCap: LFT entries the switch supports
  std::uint16_t linear_fdb_top = 0;  // LinearFDBTop: the highest LID the LFT holds (IBA 14.2.5.4)
  std::uint8_t default_port = 0;     // DefaultPort
  std::uint8_t lids_per_port = 0;    // LIDsPerPort
  // LinearFDBTop as the route reader may use it: no higher than the highest
  // unicast LID, nor than LinearFDBCap - 1 where the switch reports a cap,
  // so that a garbled answer cannot make it allocate or ask for more
  // blocks than a table can have.
  std::uint16_t usable_top() const;
};
SmpSwitchInfo decode_smp_switch_info(const PmaData& data);

// One LinearForwardingTable block: entry i is the out port of LID 64*b + i.
using LftBlock = std::array<std::uint8_t, kLftEntriesPerBlock>;
LftBlock decode_smp_lft_block(const PmaData& data);

// How many blocks hold LIDs 0..top (block b covers 64*b..64*b+63).
constexpr std::size_t lft_blocks(std::uint16_t top) { return top / kLftEntriesPerBlock + 1; }

}  // namespace ibfx
