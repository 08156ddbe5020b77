// Fabric discovery through libibnetdisc (directed-route SMPs, pipelined up to
// max_smps). Produces an immutable Fabric snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "config/config.h"
#include "fabric/fabric.h"

namespace ibfx {

// A port's state and link rates from its PortInfo attribute (IBA 14.2.5.6,
// the raw 64 bytes libibnetdisc keeps): PortState, PortPhysicalState, LMC,
// LinkWidth{Active,Enabled}, LinkSpeed{Active,Enabled} and, when
// `extended_speeds` (CapabilityMask.IsExtendedSpeedsSupported, which a
// switch reports on port 0 only), LinkSpeedExt{Active,Enabled}, and
// LinkRoundTripLatency (in ns, 0 when the port does not say). Number,
// LID and the far end are not in it (nor, for a switch's external port,
// the LMC: that is port 0's).
FabricPort port_from_port_info(const std::uint8_t* port_info, bool extended_speeds);

struct DiscoveryResult {
  std::shared_ptr<const Fabric> fabric;  // null on failure
  std::string error;
};

class Discovery {
 public:
  Discovery(std::string ca, int ca_port, DiscoveryConfig config);
  // Blocking; runs on the discovery thread, never on the sweep or HTTP path.
  DiscoveryResult discover() const;

 private:
  std::string ca_;
  int ca_port_;
  DiscoveryConfig config_;
};

}  // namespace ibfx
