// Compact binary form of a Fabric, for a discovery child's reply
// (discovery_process.h: the child discovers, the daemon merges and sweeps).
// Next to its one user: nothing but a discovery crosses a process boundary
// as a Fabric.
#pragma once

#include <string>
#include <string_view>

#include "fabric/fabric.h"

namespace ibfx {

// decode_fabric() never trusts its input: truncated, oversized or
// inconsistent bytes (counts beyond the data, links to nodes that do not
// exist) give false and a reason, never a crash or a huge allocation.
std::string encode_fabric(const Fabric& fabric);
bool decode_fabric(std::string_view bytes, Fabric& fabric, std::string& error);

}  // namespace ibfx
