// What one PortXmitWait count means on a given port: how many bytes the port
// could have sent meanwhile, hence how many seconds of stall it stands for.
// The unit differs by device generation (docs/scores.md, "PortXmitWait and
// its unit"), so it is resolved per node from NodeInfo VendorID/DeviceID,
// PortSamplesControl.Tick and the operator's overrides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "fabric/fabric.h"

// yaml-cpp's own spelling of its namespace.
namespace YAML {  // NOLINT(readability-identifier-naming)
class Node;
}

namespace ibfx {

namespace yaml {
class SectionReader;
}

// How a family of devices increments PortXmitWait.
struct XmitWaitUnitRule {
  std::string_view model;  // "quantum", "switch-ib", "iba", "custom"
  int default_tick = 7;    // PortSamplesControl.Tick assumed when the device does not answer
  bool per_lane = true;    // one count per (Tick + 1) bytes per lane, else per port
};

// A rule by name: "quantum" (Quantum, Quantum-2, Quantum-3: Tick 7, per
// port), "switch-ib" (SwitchX, Switch-IB, Switch-IB 2: Tick 31, per lane),
// "iba" (the spec: Tick symbol times per lane, Tick 7 assumed).
std::optional<XmitWaitUnitRule> xmit_wait_rule_named(std::string_view name);

// The rule of a device in the generation table, with its product name
// ("Quantum-2"); nullopt for a device the table does not know.
struct KnownDevice {
  std::string_view product;
  XmitWaitUnitRule rule;
};
std::optional<KnownDevice> known_xmit_wait_device(std::uint32_t vendor_id, std::uint32_t device_id);

// An operator's override: a rule, and optionally a fixed byte count per
// count that wins over the device's Tick.
struct XmitWaitOverride {
  XmitWaitUnitRule rule;
  double bytes = 0;  // > 0: bytes per count (per lane or per port as rule.per_lane)
};

struct XmitWaitConfig {
  // PortSamplesControl.Tick + 1 assumed for devices the table does not know
  // and that do not answer PortSamplesControl (`tick_multiplier`).
  double multiplier = 8;
  double global_seconds = 0;  // > 0: seconds per count for every port (`tick_seconds`)
  std::unordered_map<std::string, double> per_speed_seconds;         // `tick_seconds_by_speed`
  std::unordered_map<std::uint32_t, XmitWaitOverride> by_device_id;  // `xmit_wait_by_device_id`
  std::unordered_map<std::uint64_t, XmitWaitOverride> by_guid;       // `xmit_wait_by_guid`
};

// The assumption used for one port, as exported per port.
struct XmitWaitUnit {
  std::string_view model;      // rule model, or "seconds" for a configured tick length
  std::string_view source;     // "guid", "device_id", "tick_seconds", "device_table", "iba_default"
  double bytes_per_count = 0;  // bytes the whole port lost per count (0 with "seconds")
  double seconds = 0;          // seconds of stall per count; 0: unknown (port skipped)
};

// Resolves the unit of each port. Precedence: by GUID > by device ID >
// tick_seconds_by_speed > tick_seconds > the generation table > IBA. The
// device's PortSamplesControl.Tick (`device_tick` >= 0) replaces the assumed
// Tick of table and IBA rules, and of overrides without `bytes`.
class XmitWaitModel {
 public:
  explicit XmitWaitModel(const XmitWaitConfig& config) : config_(config) {}
  XmitWaitUnit resolve(const FabricNode& node, const FabricPort& port, int device_tick) const;

 private:
  const XmitWaitConfig& config_;
};

// Parses `xmit_wait_by_device_id` / `xmit_wait_by_guid` values: a rule name
// or {model: <name>, bytes: <n>}. Used by parse_score_config.
XmitWaitOverride parse_xmit_wait_override(const yaml::SectionReader& reader,
                                          const YAML::Node& value, int line, std::string_view key);

}  // namespace ibfx
