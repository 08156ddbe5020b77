#include "mad/smp_switch.h"

#include <infiniband/mad.h>

#include <algorithm>

namespace ibfx {

std::uint16_t SmpSwitchInfo::usable_top() const {
  std::uint16_t top = std::min(linear_fdb_top, kMaxUnicastLid);
  if (linear_fdb_cap > 0) top = std::min<std::uint16_t>(top, linear_fdb_cap - 1);
  return top;
}

SmpSwitchInfo decode_smp_switch_info(const PmaData& data) {
  static_assert(kAttrSwitchInfo == IB_ATTR_SWITCH_INFO);
  // libibmad's field accessors take a mutable pointer even to read.
  auto* info = const_cast<std::uint8_t*>(data.data());
  SmpSwitchInfo out;
  out.linear_fdb_cap = static_cast<std::uint16_t>(mad_get_field(info, 0, IB_SW_LINEAR_FDB_CAP_F));
  out.linear_fdb_top = static_cast<std::uint16_t>(mad_get_field(info, 0, IB_SW_LINEAR_FDB_TOP_F));
  out.default_port = static_cast<std::uint8_t>(mad_get_field(info, 0, IB_SW_DEF_PORT_F));
  out.lids_per_port = static_cast<std::uint8_t>(mad_get_field(info, 0, IB_SW_LIDS_PER_PORT_F));
  return out;
}

LftBlock decode_smp_lft_block(const PmaData& data) {
  static_assert(kAttrLinearForwardingTable == IB_ATTR_LINEARFORWTBL);
  // libibmad has no field table for the LFT: the block is 64 plain bytes,
  // the port of LID 64*b + i at byte i (IBA 14.2.5.10, Table 167), which
  // is how ibroute reads it too.
  static_assert(sizeof(PmaData) >= kLftEntriesPerBlock);
  LftBlock block;
  std::copy_n(data.begin(), kLftEntriesPerBlock, block.begin());
  return block;
}

}  // namespace ibfx
