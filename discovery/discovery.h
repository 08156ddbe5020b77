// Fabric discovery through libibnetdisc (directed-route SMPs, pipelined up to
// max_smps). Produces an immutable Fabric snapshot.
#pragma once

#include <memory>
#include <string>

#include "config/config.h"
#include "fabric/fabric.h"

namespace ibfx {

struct DiscoveryResult {
  std::shared_ptr<const Fabric> fabric;  // null on failure
  std::string error;
};

class Discovery {
 public:
  Discovery(std::string ca, int ca_port, DiscoveryConfig config);
  void set_config(const DiscoveryConfig& config) { config_ = config; }
  // Blocking; runs on the discovery thread, never on the sweep or HTTP path.
  DiscoveryResult discover() const;

 private:
  std::string ca_;
  int ca_port_;
  DiscoveryConfig config_;
};

}  // namespace ibfx
