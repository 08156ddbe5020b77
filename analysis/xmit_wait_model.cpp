#include "analysis/xmit_wait_model.h"

#include <array>

#include "config/yaml_reader.h"

namespace ibfx {
namespace {

// NVIDIA ibdiagnet User Manual, "Congestion Assessment on InfiniBand Links":
// Quantum, Quantum-2 and Quantum-3 increment xmit_wait every 8 bytes per
// port regardless of width and report PortSamplesControl.Tick = 7; Switch-IB,
// Switch-IB 2 and SwitchX every 32 bytes per lane, Tick = 31. IBA Vol. 1
// PortSamplesControl.Tick: Tick + 1 symbol times, a symbol being one byte on
// one lane, i.e. (Tick + 1) bytes per lane.
constexpr XmitWaitUnitRule kQuantum{"quantum", 7, false};
constexpr XmitWaitUnitRule kSwitchIb{"switch-ib", 31, true};
constexpr XmitWaitUnitRule kIba{"iba", 7, true};

// NodeInfo.VendorID 0x0002c9 (Mellanox/NVIDIA OUI); DeviceID is the PCI
// device ID of the switch ASIC (docs/scores.md lists the sources).
constexpr std::uint32_t kMellanoxVendor = 0x0002c9;
struct TableEntry {
  std::uint32_t device_id;
  std::string_view product;
  const XmitWaitUnitRule* rule;
};
constexpr std::array<TableEntry, 9> kTable{{
    {0xc738, "SwitchX", &kSwitchIb},
    {0xc739, "SwitchX", &kSwitchIb},
    {0xc73a, "SwitchX", &kSwitchIb},
    {0xc73b, "SwitchX", &kSwitchIb},
    {0xcb20, "Switch-IB", &kSwitchIb},
    {0xcf08, "Switch-IB 2", &kSwitchIb},
    {0xd2f0, "Quantum", &kQuantum},
    {0xd2f2, "Quantum-2", &kQuantum},
    {0xd2f4, "Quantum-3", &kQuantum},
}};

// Bytes lost per count by the whole port.
double port_bytes(const XmitWaitUnitRule& rule, double per_count, const FabricPort& port) {
  return rule.per_lane ? per_count * link_width_lanes(port.width_active) : per_count;
}

}  // namespace

std::optional<XmitWaitUnitRule> xmit_wait_rule_named(std::string_view name) {
  for (const XmitWaitUnitRule* r : {&kQuantum, &kSwitchIb, &kIba}) {
    if (r->model == name) return *r;
  }
  return std::nullopt;
}

std::optional<KnownDevice> known_xmit_wait_device(std::uint32_t vendor_id,
                                                  std::uint32_t device_id) {
  if (vendor_id != kMellanoxVendor) return std::nullopt;
  for (const TableEntry& e : kTable) {
    if (e.device_id == device_id) return KnownDevice{e.product, *e.rule};
  }
  return std::nullopt;
}

XmitWaitUnit XmitWaitModel::resolve(const FabricNode& node, const FabricPort& port,
                                    int device_tick) const {
  const double rate = link_data_rate_bytes(port);
  XmitWaitUnit unit;
  auto from_rule = [&](const XmitWaitUnitRule& rule, double fixed_bytes, std::string_view source,
                       double assumed_tick) {
    const double per_count =
        fixed_bytes > 0 ? fixed_bytes : (device_tick >= 0 ? device_tick + 1.0 : assumed_tick + 1);
    unit.model = rule.model;
    unit.source = source;
    unit.bytes_per_count = port_bytes(rule, per_count, port);
    unit.seconds = rate > 0 ? unit.bytes_per_count / rate : 0;
    return unit;
  };
  if (const auto it = config_.by_guid.find(node.guid); it != config_.by_guid.end()) {
    return from_rule(it->second.rule, it->second.bytes, "guid", it->second.rule.default_tick);
  }
  if (const auto it = config_.by_device_id.find(node.device_id); it != config_.by_device_id.end()) {
    return from_rule(it->second.rule, it->second.bytes, "device_id", it->second.rule.default_tick);
  }
  const auto speed = config_.per_speed_seconds.find(std::string(link_speed_name(port)));
  if (speed != config_.per_speed_seconds.end() || config_.global_seconds > 0) {
    unit.model = "seconds";
    unit.source = "tick_seconds";
    unit.seconds =
        speed != config_.per_speed_seconds.end() ? speed->second : config_.global_seconds;
    unit.bytes_per_count = unit.seconds * rate;
    return unit;
  }
  if (const auto known = known_xmit_wait_device(node.vendor_id, node.device_id)) {
    return from_rule(known->rule, 0, "device_table", known->rule.default_tick);
  }
  return from_rule(kIba, 0, "iba_default", config_.multiplier - 1);
}

XmitWaitOverride parse_xmit_wait_override(const yaml::SectionReader& reader,
                                          const YAML::Node& value, int line, std::string_view key) {
  auto rule_of = [&](const std::string& name, int at) {
    const auto rule = xmit_wait_rule_named(name);
    if (!rule) {
      reader.fail(
          at, key,
          "unknown PortXmitWait model \"" + name + "\" (expected quantum, switch-ib or iba)");
    }
    return *rule;
  };
  XmitWaitOverride o;
  if (value.IsScalar()) {
    o.rule = rule_of(value.Scalar(), line);
    return o;
  }
  if (!value.IsMap()) {
    reader.fail(line, key, "expected a model name or {model: <name>, bytes: <n>}");
  }
  bool have_model = false;
  reader.for_each_entry(value, [&](const std::string& k, int at, const YAML::Node& v) {
    if (k == "model") {
      o.rule = rule_of(reader.scalar(v, at, key), at);
      have_model = true;
    } else if (k == "bytes") {
      o.bytes = static_cast<double>(reader.integer(v, at, key, 1, 1024));
    } else {
      reader.fail(at, key, "unknown key \"" + k + "\" (expected model, bytes)");
    }
  });
  if (!have_model) reader.fail(line, key, "missing model (quantum, switch-ib or iba)");
  return o;
}

}  // namespace ibfx
