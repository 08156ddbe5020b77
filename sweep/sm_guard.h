// Which nodes the sweep sends no optional MAD to: the one whose port the
// master SM is bound to, any node that runs a subnet manager, and this
// management node's own HCA (docs/safety.md).
//
// "Optional" means anything beyond the reads every sweep needs: the
// once-per-node PortSamplesControl probe (IBA 16.1.3.2) and the counter
// clears (PortCounters Set). ClassPortInfo, PortCounters,
// PortCountersExtended and the NodeInfo LID check still go to every node:
// the port's PMA and SMA answer those themselves (in the HCA; in ibsim,
// which implements exactly those), so the local HCA's counters are read
// like anyone's.
//
// Why: a request nobody at the port answers itself is delivered to whatever
// software registered there, and on the management node that is the SM.
//  - rdma-core: an agent registered with umad_register(..., method_mask =
//    NULL) "can only receive replies on MADs that it sent"
//    (libibumad/man/umad_register.3); only a method_mask bit makes it a
//    receiver of unsolicited requests (kernel-headers/rdma/ib_user_mad.h,
//    struct ib_user_mad_reg_req).
//  - opensm binds its PerfMgr (opensm/osm_perfmgr.c, osm_perfmgr_bind(),
//    called from osm_opensm_bind() whether or not the PerfMgr is enabled)
//    and congestion control with is_responder = FALSE, so osm_vendor_bind()
//    (libvendor/osm_vendor_ibumad.c) registers class 0x04 with an empty
//    method mask: it relies on the kernel never delivering a PerfMgt Get to
//    it. Its receive path trusts that: umad_receiver() passes a request on
//    with p_req_madw = NULL, and perfmgr_mad_recv_callback() dereferences
//    it (osm_madw_copy_context()).
//  - The simulator breaks that promise: ibsim's process_packet()
//    (ibsim/sim_mad.c) has no handler for PortSamplesControl, so
//    find_client() (ibsim/ibsim.c) forwards the request to the client
//    registered as SM on the destination port; umad2sim's receiver
//    (umad2sim/umad2sim.c, __receiver()) ignores method masks and hands it
//    to the class 0x04 agent, the PerfMgr's: opensm segfaults. (An opensm
//    built without the PerfMgr has no such agent; umad2sim then locks the
//    mutex of a null fd_data, with the same result.)
// A real HCA's PMA answers a PortSamplesControl Get in firmware, but the
// next HCA, driver or SM build need not, and the cost of being wrong is the
// subnet manager. So these nodes get nothing they might not answer
// themselves unless counters.probe_sm_and_local_ports says otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "mad/mad_transport.h"

namespace ibfx {

class SmGuard {
 public:
  // Protects nothing (the operator opted out, or a test).
  SmGuard() = default;
  // From the latest discovery (Fabric::local_node, Fabric::sm_lid,
  // FabricNode::runs_sm) and what the MAD worker's port says of itself
  // (LocalPort, from the kernel): either source suffices.
  SmGuard(const Fabric& fabric, const LocalPort& local);

  bool protects(std::uint64_t guid) const { return reasons_.contains(guid); }
  // Why the node is protected, for the log ("the master SM's port (LID 1),
  // this management node's own HCA"); empty when it is not.
  std::string reason(std::uint64_t guid) const;
  // Protected node GUIDs with their reasons, in GUID order.
  const std::map<std::uint64_t, std::string>& nodes() const { return reasons_; }

 private:
  void add(std::uint64_t guid, const std::string& why);
  std::map<std::uint64_t, std::string> reasons_;
};

}  // namespace ibfx
