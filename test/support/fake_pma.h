// A fake PMA fabric behind the MadTransport interface: answers ClassPortInfo,
// PortCounters (Get/Set) and PortCountersExtended from per-port values, so
// unit tests can cover what ibsim cannot (CapabilityMask2, saturation,
// out-of-band clears, kernel timeouts).
#pragma once

#include <infiniband/mad.h>

#include <deque>
#include <map>
#include <set>
#include <vector>

#include "fabric/fabric.h"
#include "mad/mad_transport.h"
#include "mad/pma.h"

namespace ibfx::test {

struct FakePort {
  std::map<MAD_FIELDS, std::uint64_t> narrow;    // PortCounters fields
  std::map<MAD_FIELDS, std::uint64_t> extended;  // PortCountersExtended fields
  // Fields of the optional attributes (PortRcvErrorDetails, PortSLRcvFECN,
  // ...), set into the response with libibmad's own field tables.
  std::map<std::uint16_t, std::map<MAD_FIELDS, std::uint64_t>> optional;  // by attribute ID
  std::uint32_t last_clear_mask = 0;
  int clears = 0;
};

struct FakeNode {
  std::uint16_t cap_mask = pma_cap::kExtWidth | pma_cap::kXmitWait;
  std::uint32_t cap_mask2 = 0;
  std::map<std::uint8_t, FakePort> ports;
  bool silent = false;             // never answers
  int drop_next = 0;               // drops this many requests, then answers
  bool kernel_timeouts = false;    // returns the request as a send failure
  std::uint16_t error_status = 0;  // answers every request with this status
  int sample_tick = 7;             // PortSamplesControl.Tick; -1: attribute unsupported
  int sample_controls = 0;         // PortSamplesControl requests received
  // Optional PMA attributes (IB_GSI_PORT_RCV_ERROR_DETAILS, ...) this PMA
  // implements; the others get status 0x0C, or no answer with
  // drop_unsupported (a PMA that ignores what it does not know).
  std::set<std::uint16_t> optional_attrs;
  bool drop_unsupported = false;
  std::map<std::uint16_t, int> requests;  // by attribute ID, every PMA request
  int max_seen_inflight = 0;
  int inflight = 0;
  // NodeInfo as its SMA answers a LID-routed SMP (FakePma::smp): who owns
  // this LID.
  std::uint64_t guid = 0;
  std::uint8_t local_port = 1;
  int smps = 0;             // SMPs received
  bool sma_silent = false;  // drops SMPs while the PMA answers
  // A switch's SMA (FakePma::smp): SwitchInfo (IBA 14.2.5.4, LinearFDBCap
  // and LinearFDBTop = lft.size() - 1, set with libibmad's field table) and
  // LinearForwardingTable blocks (IBA 14.2.5.10: 64 one-byte ports, block
  // number in the attribute modifier; 0xFF past the top).
  bool sma_switch = false;
  std::uint16_t linear_fdb_cap = 0xC000;
  std::vector<std::uint8_t> lft;            // out port by LID
  std::map<std::uint8_t, int> smp_methods;  // every SMP received, by method
  std::map<std::uint16_t, int> smp_attrs;   // every SMP received, by attribute ID
};

class FakePma final : public MadTransport {
 public:
  std::map<std::uint16_t, FakeNode> nodes;
  int max_seen_global_inflight = 0;
  std::uint64_t sent = 0;
  bool smp = false;  // takes SMPs (a transport with QP0 access)

  bool supports_smp() const override { return smp; }

  bool send(std::uint16_t lid, const MadBytes& mad, std::chrono::milliseconds) override {
    ++sent;
    auto it = nodes.find(lid);
    if (it == nodes.end()) return true;  // nobody there: silence
    FakeNode& node = it->second;
    if (node.silent) return true;
    if (mad_get_field(const_cast<std::uint8_t*>(mad.data()), 0, IB_MAD_MGMTCLASS_F) ==
        IB_SMI_CLASS) {
      auto* raw = const_cast<std::uint8_t*>(mad.data());
      ++node.smp_methods[static_cast<std::uint8_t>(mad_get_field(raw, 0, IB_MAD_METHOD_F))];
      ++node.smp_attrs[static_cast<std::uint16_t>(mad_get_field(raw, 0, IB_MAD_ATTRID_F))];
    }
    if (node.sma_silent && mad_get_field(const_cast<std::uint8_t*>(mad.data()), 0,
                                         IB_MAD_MGMTCLASS_F) == IB_SMI_CLASS) {
      ++node.smps;
      return true;
    }
    if (node.drop_next > 0) {
      --node.drop_next;
      return true;
    }
    if (node.kernel_timeouts) {
      queue_.push_back({Received::Kind::kSendFailed, mad, lid});
      return true;
    }
    ++node.inflight;
    node.max_seen_inflight = std::max(node.max_seen_inflight, node.inflight);
    ++inflight_;
    max_seen_global_inflight = std::max(max_seen_global_inflight, inflight_);
    MadBytes resp = mad;
    auto* m = resp.data();
    const auto method = mad_get_field(m, 0, IB_MAD_METHOD_F);
    mad_set_field(m, 0, IB_MAD_METHOD_F, 0x81);  // GetResp
    if (node.error_status != 0) {
      mad_set_field(m, 0, IB_MAD_STATUS_F, node.error_status);
      queue_.push_back({Received::Kind::kResponse, resp, lid});
      return true;
    }
    std::uint8_t* data = m + kPmaDataOffset;
    const auto attr = mad_get_field(m, 0, IB_MAD_ATTRID_F);
    if (attr == kAttrPortSamplesControl) ++node.sample_controls;
    if (mad_get_field(m, 0, IB_MAD_MGMTCLASS_F) != IB_SMI_CLASS) ++node.requests[attr];
    const bool optional_attr =
        attr == IB_GSI_PORT_RCV_ERROR_DETAILS || attr == IB_GSI_PORT_XMIT_DISCARD_DETAILS ||
        attr == IB_GSI_PORT_PORT_VL_XMIT_WAIT_COUNTERS ||
        (attr >= IB_GSI_PORT_RCV_CON_CTRL && attr <= IB_GSI_PORT_VL_XMIT_TIME_CONG);
    if (optional_attr && node.optional_attrs.count(static_cast<std::uint16_t>(attr)) == 0 &&
        node.drop_unsupported) {
      --node.inflight;
      --inflight_;
      return true;
    }
    if (mad_get_field(m, 0, IB_MAD_MGMTCLASS_F) == IB_SMI_CLASS) {
      ++node.smps;
      if (attr == IB_ATTR_NODE_INFO) {
        mad_set_field64(data, 0, IB_NODE_GUID_F, node.guid);
        mad_set_field(data, 0, IB_NODE_LOCAL_PORT_F, node.local_port);
      } else if (attr == IB_ATTR_SWITCH_INFO && node.sma_switch) {
        mad_set_field(data, 0, IB_SW_LINEAR_FDB_CAP_F, node.linear_fdb_cap);
        mad_set_field(data, 0, IB_SW_LINEAR_FDB_TOP_F,
                      node.lft.empty() ? 0 : static_cast<std::uint32_t>(node.lft.size() - 1));
      } else if (attr == IB_ATTR_LINEARFORWTBL && node.sma_switch) {
        const auto block = static_cast<std::size_t>(mad_get_field(m, 0, IB_MAD_ATTRMOD_F));
        for (std::size_t i = 0; i < 64; ++i) {
          const std::size_t dlid = block * 64 + i;
          data[i] = dlid < node.lft.size() ? node.lft[dlid] : 0xFF;
        }
      } else {
        mad_set_field(m, 0, IB_MAD_STATUS_F, 0x0C);
      }
    } else if (attr == kAttrClassPortInfo) {
      mad_set_field(data, 0, IB_CPI_CAPMASK_F, node.cap_mask);
      mad_set_field(data, 0, IB_CPI_CAPMASK2_F, node.cap_mask2);
    } else if (attr == kAttrPortCounters) {
      const auto port = static_cast<std::uint8_t>(mad_get_field(data, 0, IB_PC_PORT_SELECT_F));
      FakePort& p = node.ports[port];
      if (method == 0x02) {  // Set: clear selected counters
        const std::uint32_t mask = mad_get_field(data, 0, IB_PC_COUNTER_SELECT_F) |
                                   (mad_get_field(data, 0, IB_PC_COUNTER_SELECT2_F) << 16);
        p.last_clear_mask = mask;
        ++p.clears;
        clear(p, mask);
      }
      for (auto& [f, v] : p.narrow) mad_set_field(data, 0, f, static_cast<std::uint32_t>(v));
    } else if (attr == kAttrPortSamplesControl && node.sample_tick >= 0) {
      mad_set_field(data, 0, IB_PSC_TICK_F, static_cast<std::uint32_t>(node.sample_tick));
    } else if (optional_attr && node.optional_attrs.count(static_cast<std::uint16_t>(attr)) != 0) {
      const auto port = static_cast<std::uint8_t>(mad_get_field(data, 0, IB_PC_PORT_SELECT_F));
      FakePort& p = node.ports[port];
      for (auto& [f, v] : p.optional[static_cast<std::uint16_t>(attr)]) {
        std::uint32_t value = static_cast<std::uint32_t>(v);
        mad_encode_field(data, f, &value);
      }
    } else if (attr == kAttrPortCountersExtended) {
      const auto port = static_cast<std::uint8_t>(mad_get_field(data, 0, IB_PC_EXT_PORT_SELECT_F));
      FakePort& p = node.ports[port];
      for (auto& [f, v] : p.extended) mad_set_field64(data, 0, f, v);
    } else {
      mad_set_field(m, 0, IB_MAD_STATUS_F, 0x0C);  // unsupported attribute
    }
    queue_.push_back({Received::Kind::kResponse, resp, lid});
    return true;
  }

  Received receive(std::chrono::milliseconds) override {
    if (queue_.empty()) return {};
    Pending p = queue_.front();
    queue_.pop_front();
    if (p.kind == Received::Kind::kResponse) {
      auto& node = nodes[p.lid];
      if (node.inflight > 0) --node.inflight;
      if (inflight_ > 0) --inflight_;
    }
    Received r;
    r.kind = p.kind;
    r.mad = p.mad;
    return r;
  }

 private:
  static void clear(FakePort& p, std::uint32_t mask) {
    static const std::pair<int, MAD_FIELDS> bits[] = {
        {0, IB_PC_ERR_SYM_F},        {1, IB_PC_LINK_RECOVERS_F},   {2, IB_PC_LINK_DOWNED_F},
        {3, IB_PC_ERR_RCV_F},        {4, IB_PC_ERR_PHYSRCV_F},     {5, IB_PC_ERR_SWITCH_REL_F},
        {6, IB_PC_XMT_DISCARDS_F},   {7, IB_PC_ERR_XMTCONSTR_F},   {8, IB_PC_ERR_RCVCONSTR_F},
        {9, IB_PC_ERR_LOCALINTEG_F}, {10, IB_PC_ERR_EXCESS_OVR_F}, {11, IB_PC_VL15_DROPPED_F},
        {12, IB_PC_XMT_BYTES_F},     {13, IB_PC_RCV_BYTES_F},      {14, IB_PC_XMT_PKTS_F},
        {15, IB_PC_RCV_PKTS_F},      {16, IB_PC_XMT_WAIT_F}};
    for (auto [bit, f] : bits) {
      if (mask & (1u << bit)) p.narrow[f] = 0;
    }
  }
  struct Pending {
    Received::Kind kind;
    MadBytes mad;
    std::uint16_t lid;
  };
  std::deque<Pending> queue_;
  int inflight_ = 0;
};

// A FakePma for `fabric`: every node at its LID, its SMA naming its GUID.
inline FakePma fake_for(const ibfx::Fabric& fabric) {
  FakePma fake;
  for (const ibfx::FabricNode& n : fabric.nodes) fake.nodes[n.lid].guid = n.guid;
  return fake;
}

}  // namespace ibfx::test
