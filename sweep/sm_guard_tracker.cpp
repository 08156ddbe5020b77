#include "sweep/sm_guard_tracker.h"

#include <string>

namespace ibfx {
namespace {

// What the guard withholds (sweep/sm_guard.h), named the same in both lines.
constexpr const char* kOptionalMads =
    "optional MADs (the PortSamplesControl probe, counter-group probes, counter clears)";

}  // namespace

SmGuardTracker::Result SmGuardTracker::next(const Fabric& fabric, const LocalPort& local,
                                            bool probe_all, const NodeNameMap& names) {
  Result out;
  if (probe_all) {
    if (!opted_out_logged_) {
      opted_out_logged_ = true;
      out.lines.push_back(
          {LogLevel::kWarn,
           std::string("counters.probe_sm_and_local_ports is on: ") + kOptionalMads +
               " also go to the subnet manager's node and this node's own HCA; under ibsim that "
               "kills opensm (docs/safety.md)"});
    }
    guarded_.clear();
    return out;
  }
  opted_out_logged_ = false;
  out.guard = SmGuard(fabric, local);
  if (fabric.sm_lid == 0 && local.sm_lid == 0 && !sm_lid_unknown_logged_) {
    sm_lid_unknown_logged_ = true;
    out.lines.push_back(
        {LogLevel::kWarn,
         "the master SM's LID is unknown (PortInfo:MasterSMLID is 0 on the local port): no "
         "subnet manager yet? Optional MADs still skip nodes that run an SM and this node's "
         "own HCA"});
  }
  // Once per node and reason: the operator learns what is withheld from
  // whom and why, not every sweep.
  const auto& nodes = out.guard.nodes();
  if (nodes != guarded_) {
    for (const auto& [guid, why] : nodes) {
      const auto known = guarded_.find(guid);
      if (known != guarded_.end() && known->second == why) continue;
      const FabricNode* node = fabric.find(guid);
      std::string name = node != nullptr ? node->description : std::string();
      if (const auto it = names.find(guid); it != names.end()) name = it->second;
      std::string line = std::string("not sending ") + kOptionalMads + " to ";
      line += name;
      line += " (" + guid_hex(guid) + ", LID ";
      line += std::to_string(node != nullptr ? node->lid : 0);
      line += "): ";
      line += why;
      line += "; its counters are read as usual; counters.probe_sm_and_local_ports allows them";
      out.lines.push_back({LogLevel::kInfo, std::move(line)});
    }
    guarded_ = nodes;
  }
  return out;
}

}  // namespace ibfx
