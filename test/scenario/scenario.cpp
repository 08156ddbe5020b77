#include "test/scenario/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace ibfx::test {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// ibsim's console buffer is 128 bytes; SimFabric::console() allows 120. The
// longest line is PerformanceSet "<name>"[255] PortCountersExtended.PortXmitData=<20 digits>.
constexpr std::size_t kMaxConsoleLine = 120;
constexpr std::size_t kMaxNodeName =
    kMaxConsoleLine -
    std::string_view("PerformanceSet \"\"[255] PortCountersExtended.PortXmitData=").size() - 20;

// Index of each counter in PortState::sent, with its console attribute.
enum Counter { kXmitData, kRcvData, kXmitPkts, kRcvPkts, kXmitWait, kSymbolErrors, kLinkDowned };
constexpr const char* kCounterAttribute[] = {
    "PortCountersExtended.PortXmitData", "PortCountersExtended.PortRcvData",
    "PortCountersExtended.PortXmitPkts", "PortCountersExtended.PortRcvPkts",
    "PortCounters.PortXmitWait",         "PortCounters.SymbolErrorCounter",
    "PortCounters.LinkDownedCounter"};
constexpr int kCounterCount = 7;

bool is_background(EffectType type) {
  return type == EffectType::kAllreduce || type == EffectType::kCrossRail;
}

// splitmix64 finalizer: a fully specified hash, so noise is identical with
// every compiler and standard library.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1), a pure function of its arguments.
double noise_unit(std::uint64_t seed, std::size_t effect, std::size_t port, std::size_t tick) {
  std::uint64_t h = mix(seed);
  h = mix(h ^ effect);
  h = mix(h ^ port);
  h = mix(h ^ tick);
  return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
}

double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

// Height in the fat tree: HCAs 0, leaves 1, spines 2, cores 3; switches of
// other fabrics -1 (no direction).
int tier_level(NodeRole role) {
  switch (role) {
    case NodeRole::kServerHca:
    case NodeRole::kStorageHca:
    case NodeRole::kMgmtHca:
      return 0;
    case NodeRole::kLeaf:
    case NodeRole::kStorageLeaf:
      return 1;
    case NodeRole::kSpine:
      return 2;
    case NodeRole::kCore:
      return 3;
    case NodeRole::kSwitch:
      break;
  }
  return -1;
}

std::string quoted_port(const std::string& node, int port) {
  return "\"" + node + "\"[" + std::to_string(port) + "]";
}

// ---------------------------------------------------------------- loading

class Loader {
 public:
  explicit Loader(std::string source) : source_(std::move(source)) {}

  Scenario load(const std::string& text) {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      throw std::runtime_error(source_ + ":" + std::to_string(e.mark.line + 1) +
                               ": yaml: " + e.msg);
    }
    if (!root.IsMap()) fail(root, "scenario", "expected a map of settings");
    check_keys(root,
               {"name", "seed", "fabric", "time_scale", "duration", "tick", "xmit_wait_tick_ns",
                "max_commands_per_tick", "jitter", "read_skew", "effects"});

    Scenario s;
    s.path = source_;
    if (root["name"]) s.name = string_value(root["name"], "name");
    s.seed = uint_value(root, "seed", 1, std::numeric_limits<std::uint64_t>::max());
    s.time_scale = positive(root, "time_scale", 1.0);
    s.duration = positive(root, "duration", 60.0);
    s.tick = positive(root, "tick", 1.0);
    if (s.tick > s.duration) {
      fail(root["tick"], "tick", "longer than duration (" + number(s.duration) + ")");
    }
    s.xmit_wait_tick_ns = positive(root, "xmit_wait_tick_ns", kDefaultXmitWaitTickNs);
    s.max_commands_per_tick =
        uint_value(root, "max_commands_per_tick", 0, std::numeric_limits<std::uint32_t>::max());
    s.jitter = ranged(root, "jitter", 0, 0, 0.5, "");
    s.read_skew = ranged(root, "read_skew", 0, 0, 0.5, "");

    const YAML::Node fabric = root["fabric"];
    if (!fabric) fail(root, "fabric", "missing (servers, rails, tiers, radix, storage_nodes)");
    s.fabric = fabric_spec(fabric);
    Fabric generated;
    try {
      generated = make_fat_tree(s.fabric);
    } catch (const std::exception& e) {
      fail(fabric, "fabric", e.what());
    }
    for (const FabricNode& n : generated.nodes()) {
      if (n.name.size() > kMaxNodeName) {
        fail(fabric, "fabric",
             "node name \"" + n.name + "\" longer than " + std::to_string(kMaxNodeName) +
                 " characters: its console lines would not fit ibsim's buffer");
      }
    }

    const YAML::Node effects = root["effects"];
    if (effects) {
      if (!effects.IsSequence()) fail(effects, "effects", "expected a list of effects");
      for (const YAML::Node& e : effects) s.effects.push_back(effect(e, s, generated));
    }
    return s;
  }

 private:
  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const {
    const int line = at.Mark().line >= 0 ? at.Mark().line + 1 : 0;
    throw std::runtime_error(source_ + ":" + std::to_string(line) + ": " + key + ": " + what);
  }

  static std::string number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

  void check_keys(const YAML::Node& map, std::initializer_list<const char*> allowed,
                  const std::string& context = "") const {
    for (const auto& item : map) {
      const std::string key = item.first.Scalar();
      if (std::none_of(allowed.begin(), allowed.end(),
                       [&key](const char* a) { return key == a; })) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(item.first, context + key, "unknown key (expected one of: " + list + ")");
      }
    }
  }

  std::string string_value(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a string");
    return node.Scalar();
  }

  // Numbers are parsed with from_chars: yaml-cpp's conversions accept
  // trailing garbage in some versions, and "5s" must not silently become 5.
  double double_value(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a number");
    const std::string& text = node.Scalar();
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
      fail(node, key, "not a number: \"" + text + "\"");
    }
    return value;
  }

  long long int_value(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected an integer");
    const std::string& text = node.Scalar();
    long long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      fail(node, key, "not an integer: \"" + text + "\"");
    }
    return value;
  }

  std::uint64_t uint_value(const YAML::Node& map, const std::string& key, std::uint64_t fallback,
                           std::uint64_t max, const std::string& context = "") const {
    const YAML::Node node = map[key];
    if (!node) return fallback;
    if (!node.IsScalar()) fail(node, context + key, "expected an integer");
    const std::string& text = node.Scalar();
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      fail(node, context + key, "not a non-negative integer: \"" + text + "\"");
    }
    if (value > max) fail(node, context + key, "out of range [0, " + std::to_string(max) + "]");
    return value;
  }

  double positive(const YAML::Node& map, const std::string& key, double fallback,
                  const std::string& context = "") const {
    const YAML::Node node = map[key];
    if (!node) return fallback;
    const double v = double_value(node, context + key);
    if (v <= 0) fail(node, context + key, "must be > 0 (got " + node.Scalar() + ")");
    return v;
  }

  // A number in [lo, hi].
  double ranged(const YAML::Node& map, const std::string& key, double fallback, double lo,
                double hi, const std::string& context) const {
    const YAML::Node node = map[key];
    if (!node) return fallback;
    const double v = double_value(node, context + key);
    if (v < lo || v > hi) {
      fail(node, context + key,
           "must be in [" + number(lo) + ", " + number(hi) + "] (got " + node.Scalar() + ")");
    }
    return v;
  }

  FatTreeSpec fabric_spec(const YAML::Node& node) const {
    if (!node.IsMap()) fail(node, "fabric", "expected a map (servers, rails, tiers, radix, ...)");
    check_keys(node,
               {"servers", "rails", "tiers", "radix", "storage_nodes", "host_prefix",
                "storage_prefix", "mgmt_host", "leaf_prefix", "spine_prefix", "core_prefix"},
               "fabric.");
    FatTreeSpec spec;
    auto int_field = [&](const char* key, int& field) {
      const YAML::Node v = node[key];
      if (!v) return;
      const long long parsed = int_value(v, std::string("fabric.") + key);
      if (parsed < 0 || parsed > 1000000) {
        fail(v, std::string("fabric.") + key, "out of range [0, 1000000]");
      }
      field = static_cast<int>(parsed);
    };
    auto string_field = [&](const char* key, std::string& field) {
      if (node[key]) field = string_value(node[key], std::string("fabric.") + key);
    };
    int_field("servers", spec.servers);
    int_field("rails", spec.rails);
    int_field("tiers", spec.tiers);
    int_field("radix", spec.radix);
    int_field("storage_nodes", spec.storage_nodes);
    string_field("host_prefix", spec.host_prefix);
    string_field("storage_prefix", spec.storage_prefix);
    string_field("mgmt_host", spec.mgmt_host);
    string_field("leaf_prefix", spec.leaf_prefix);
    string_field("spine_prefix", spec.spine_prefix);
    string_field("core_prefix", spec.core_prefix);
    return spec;
  }

  // node + port of an effect: must name a cabled port of the fabric.
  void port_ref(const YAML::Node& e, const std::string& ctx, const Fabric& fabric, Effect& out,
                bool switch_only) const {
    const YAML::Node node = e["node"];
    if (!node) fail(e, ctx + "node", "missing");
    out.node = string_value(node, ctx + "node");
    const int index = fabric.find(out.node);
    if (index < 0) fail(node, ctx + "node", "unknown node \"" + out.node + "\"");
    const FabricNode& n = fabric.node(index);
    if (switch_only && !n.is_switch()) {
      fail(node, ctx + "node", "\"" + out.node + "\" is not a switch");
    }
    const YAML::Node port = e["port"];
    if (!port) fail(e, ctx + "port", "missing");
    const long long p = int_value(port, ctx + "port");
    if (p < 1 || p > n.num_ports()) {
      fail(port, ctx + "port",
           "\"" + out.node + "\" has ports 1.." + std::to_string(n.num_ports()) + " (got " +
               port.Scalar() + ")");
    }
    if (!n.ports[static_cast<std::size_t>(p)].connected()) {
      fail(port, ctx + "port", "\"" + out.node + "\"[" + port.Scalar() + "] is not cabled");
    }
    out.port = static_cast<int>(p);
  }

  Effect effect(const YAML::Node& e, const Scenario& s, const Fabric& fabric) const {
    if (!e.IsMap()) fail(e, "effects", "expected a map with a type");
    const YAML::Node type = e["type"];
    if (!type) fail(e, "effects", "effect without a type");
    const std::string name = string_value(type, "type");
    const std::string ctx = name + ".";
    Effect out;
    out.line = e.Mark().line + 1;
    if (name == "allreduce" || name == "cross_rail") {
      out.type = name == "allreduce" ? EffectType::kAllreduce : EffectType::kCrossRail;
      check_keys(e, {"type", "start", "end", "load", "wait_ratio", "noise"}, ctx);
      out.load = ranged(e, "load", 0.5, 0, 1, ctx);
      out.wait_ratio = ranged(e, "wait_ratio", 0.02, 0, 1, ctx);
      out.noise = ranged(e, "noise", 0.05, 0, 1, ctx);
    } else if (name == "incast") {
      out.type = EffectType::kIncast;
      check_keys(e, {"type", "start", "end", "targets", "load", "ratio", "spread"}, ctx);
      out.load = ranged(e, "load", 0.9, 0, 1, ctx);
      out.ratio = ranged(e, "ratio", 0.6, 0, 1, ctx);
      out.spread = ranged(e, "spread", 0.5, 0, 1, ctx);
      if (const YAML::Node targets = e["targets"]) {
        out.targets = hca_names(targets, ctx + "targets", fabric);
      } else {
        for (const FabricNode& n : fabric.nodes()) {
          if (n.role == NodeRole::kStorageHca) out.targets.push_back(n.name);
        }
      }
      if (out.targets.empty()) {
        fail(e, ctx + "targets", "no targets and the fabric has no storage nodes");
      }
    } else if (name == "congested_port") {
      out.type = EffectType::kCongestedPort;
      check_keys(e, {"type", "start", "end", "node", "port", "ratio", "spread"}, ctx);
      port_ref(e, ctx, fabric, out, true);
      out.ratio = ranged(e, "ratio", 0.7, 0, 1, ctx);
      out.spread = ranged(e, "spread", 0.3, 0, 1, ctx);
    } else if (name == "symbol_errors") {
      out.type = EffectType::kSymbolErrors;
      check_keys(e, {"type", "start", "end", "node", "port", "rate"}, ctx);
      port_ref(e, ctx, fabric, out, false);
      out.rate = ranged(e, "rate", 10, 0, 1e9, ctx);
    } else if (name == "flap") {
      out.type = EffectType::kFlap;
      check_keys(e, {"type", "start", "end", "node", "port", "period", "down_time"}, ctx);
      port_ref(e, ctx, fabric, out, false);
      out.period = positive(e, "period", 30, ctx);
      out.down_time = positive(e, "down_time", std::min(5.0, out.period / 2), ctx);
      if (out.down_time >= out.period) {
        fail(e["down_time"] ? e["down_time"] : e, ctx + "down_time",
             "must be shorter than period (" + number(out.period) + ")");
      }
    } else if (name == "congestion_tree") {
      out.type = EffectType::kCongestionTree;
      check_keys(e,
                 {"type", "start", "end", "cause", "node", "port", "load", "root_ratio", "ratio",
                  "spread", "senders", "sender_load", "stalled"},
                 ctx);
      if (!e["cause"]) fail(e, ctx + "cause", "missing");
      out.cause = string_value(e["cause"], ctx + "cause");
      const bool down = out.cause == "incast" || out.cause == "slow_receiver";
      const bool up = out.cause == "oversubscribed" || out.cause == "routing_imbalance";
      if (!down && !up) {
        fail(e["cause"], ctx + "cause",
             "unknown cause \"" + out.cause +
                 "\" (expected incast, slow_receiver, oversubscribed, routing_imbalance)");
      }
      port_ref(e, ctx, fabric, out, true);
      const FabricNode& self = fabric.node(fabric.find(out.node));
      const FabricNode& peer = fabric.node(self.ports[static_cast<std::size_t>(out.port)].node);
      if (down && peer.is_switch()) {
        fail(e["port"], ctx + "port",
             "the root of a " + out.cause + " tree must be a port into an HCA");
      }
      if (up && (!peer.is_switch() || tier_level(peer.role) <= tier_level(self.role))) {
        fail(e["port"], ctx + "port", "the root of a " + out.cause + " tree must be an up port");
      }
      const bool slow = out.cause == "slow_receiver";
      out.load = ranged(e, "load", slow ? 0.2 : 0.98, 0, 1, ctx);
      out.root_ratio = ranged(e, "root_ratio", slow ? 0.8 : 0.01, 0, 1, ctx);
      out.ratio = ranged(e, "ratio", 0.5, 0.01, 1, ctx);
      out.spread = ranged(e, "spread", 0.6, 0, 1, ctx);
      if (const YAML::Node senders = e["senders"]) {
        out.targets = hca_names(senders, ctx + "senders", fabric);
      }
      out.sender_load = ranged(e, "sender_load", 0.9, 0, 1, ctx);
      if (const YAML::Node stalled = e["stalled"]) {
        out.stalled = hca_names(stalled, ctx + "stalled", fabric);
      }
    } else {
      fail(type, "type",
           "unknown effect \"" + name +
               "\" (expected allreduce, cross_rail, incast, congested_port, symbol_errors, flap, "
               "congestion_tree)");
    }
    out.start = ranged(e, "start", 0, 0, s.duration, ctx);
    out.end = ranged(e, "end", s.duration, 0, s.duration, ctx);
    if (out.start >= s.duration) {
      fail(e["start"], ctx + "start",
           "must be before the end of the scenario (duration " + number(s.duration) + ")");
    }
    if (out.end <= out.start) {
      fail(e["end"] ? e["end"] : e, ctx + "end", "must be after start (" + number(out.start) + ")");
    }
    return out;
  }

  // An HCA name or a list of them, each a cabled HCA of `fabric`.
  std::vector<std::string> hca_names(const YAML::Node& list, const std::string& key,
                                     const Fabric& fabric) const {
    std::vector<std::string> names;
    if (list.IsScalar()) {
      names.push_back(list.Scalar());
    } else if (list.IsSequence()) {
      for (const YAML::Node& t : list) names.push_back(string_value(t, key));
    } else {
      fail(list, key, "expected an HCA name or a list of them");
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      const YAML::Node at = list.IsSequence() ? list[i] : list;
      const int index = fabric.find(names[i]);
      if (index < 0) fail(at, key, "unknown node \"" + names[i] + "\"");
      if (fabric.node(index).is_switch()) {
        fail(at, key, "\"" + names[i] + "\" is a switch, not an HCA");
      }
      if (!fabric.node(index).ports[1].connected()) {
        fail(at, key, "\"" + names[i] + "\" is not cabled");
      }
    }
    return names;
  }

  std::string source_;
};

}  // namespace

const char* to_string(EffectType type) {
  switch (type) {
    case EffectType::kAllreduce:
      return "allreduce";
    case EffectType::kCrossRail:
      return "cross_rail";
    case EffectType::kIncast:
      return "incast";
    case EffectType::kCongestedPort:
      return "congested_port";
    case EffectType::kSymbolErrors:
      return "symbol_errors";
    case EffectType::kFlap:
      return "flap";
    case EffectType::kCongestionTree:
      return "congestion_tree";
  }
  return "unknown";
}

Scenario parse_scenario(const std::string& yaml_text, const std::string& source) {
  return Loader(source).load(yaml_text);
}

Scenario load_scenario(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error(path + ": cannot open scenario file");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw std::runtime_error(path + ": cannot read scenario file");
  return parse_scenario(text.str(), path);
}

// ---------------------------------------------------------------- driver

void ScenarioDriver::Fractional::add(double amount, std::uint64_t& total) {
  // Whole units go to the total, the fraction waits for the next tick: a
  // symbol error rate of 0.5/s must count 1 every 2 s, not round to 1/s.
  carry += amount;
  const double whole = std::floor(carry);
  if (whole >= 1) {
    total += static_cast<std::uint64_t>(whole);
    carry -= whole;
  }
}

ScenarioDriver::ScenarioDriver(Scenario scenario)
    : scenario_(std::move(scenario)), fabric_(make_fat_tree(scenario_.fabric)) {
  const auto& nodes = fabric_.nodes();
  index_.resize(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    index_[n].assign(nodes[n].ports.size(), kNone);
    for (int p = 1; p <= nodes[n].num_ports(); ++p) {
      if (!nodes[n].ports[static_cast<std::size_t>(p)].connected()) continue;
      index_[n][static_cast<std::size_t>(p)] = ports_.size();
      PortState state;
      state.node = static_cast<int>(n);
      state.port = p;
      ports_.push_back(state);
    }
  }
  for (PortState& state : ports_) {
    const PortRef peer =
        nodes[static_cast<std::size_t>(state.node)].ports[static_cast<std::size_t>(state.port)];
    state.peer = index_[static_cast<std::size_t>(peer.node)][static_cast<std::size_t>(peer.port)];
  }
  build_contributions();
}

std::size_t ScenarioDriver::port_index(const std::string& node, int port) const {
  const int n = fabric_.find(node);
  if (n < 0 || port < 1 || port > fabric_.node(n).num_ports() ||
      index_[static_cast<std::size_t>(n)][static_cast<std::size_t>(port)] == kNone) {
    throw std::out_of_range("no cabled port \"" + node + "\"[" + std::to_string(port) + "]");
  }
  return index_[static_cast<std::size_t>(n)][static_cast<std::size_t>(port)];
}

// Resolves every effect to the ports it touches, once: step() then only
// scales these by time overlap and noise.
void ScenarioDriver::build_contributions() {
  const auto& nodes = fabric_.nodes();
  auto role_of = [&](std::size_t port) {
    return nodes[static_cast<std::size_t>(ports_[port].node)].role;
  };
  auto is_switch_port = [&](std::size_t port) {
    return nodes[static_cast<std::size_t>(ports_[port].node)].is_switch();
  };

  contributions_.clear();
  for (const Effect& e : scenario_.effects) {
    std::vector<Contribution> list;
    switch (e.type) {
      case EffectType::kAllreduce:
        for (std::size_t p = 0; p < ports_.size(); ++p) {
          const NodeRole self = role_of(p);
          const NodeRole peer = role_of(ports_[p].peer);
          if ((self == NodeRole::kServerHca && peer == NodeRole::kLeaf) ||
              (self == NodeRole::kLeaf && peer == NodeRole::kServerHca)) {
            list.push_back({p, e.load, e.wait_ratio, true});
          }
        }
        break;
      case EffectType::kCrossRail:
        for (std::size_t p = 0; p < ports_.size(); ++p) {
          if (is_switch_port(p) && is_switch_port(ports_[p].peer)) {
            list.push_back({p, e.load, e.wait_ratio, true});
          }
        }
        break;
      case EffectType::kIncast:
      case EffectType::kCongestedPort: {
        // Culprit ports first, then one hop of head-of-line blocking upstream.
        std::vector<std::size_t> hot;
        if (e.type == EffectType::kCongestedPort) {
          hot.push_back(port_index(e.node, e.port));
        } else {
          std::set<int> leaves;
          for (const std::string& target : e.targets) {
            const PortRef leaf = fabric_.node(fabric_.find(target)).ports[1];
            hot.push_back(
                index_[static_cast<std::size_t>(leaf.node)][static_cast<std::size_t>(leaf.port)]);
            leaves.insert(leaf.node);
          }
          for (std::size_t p = 0; p < ports_.size(); ++p) {
            // A switch port whose peer is on a target's leaf: towards the targets.
            if (is_switch_port(p) && leaves.count(ports_[ports_[p].peer].node)) {
              hot.push_back(p);
            }
          }
        }
        std::set<std::size_t> hot_set(hot.begin(), hot.end());
        std::set<int> stalled_switches;
        for (std::size_t p : hot) stalled_switches.insert(ports_[p].node);
        for (std::size_t p : hot)
          list.push_back({p, e.type == EffectType::kIncast ? e.load : 0.0, e.ratio, false});
        for (std::size_t p = 0; p < ports_.size(); ++p) {
          if (hot_set.count(p) || !is_switch_port(p)) continue;
          if (stalled_switches.count(ports_[ports_[p].peer].node)) {
            list.push_back({p, 0.0, e.ratio * e.spread, false});
          }
        }
        break;
      }
      case EffectType::kSymbolErrors:
        list.push_back({port_index(e.node, e.port), 0.0, 0.0, false});
        break;
      case EffectType::kFlap: {
        const std::size_t p = port_index(e.node, e.port);
        list.push_back({p, 0.0, 0.0, false});
        list.push_back({ports_[p].peer, 0.0, 0.0, false});
        break;
      }
      case EffectType::kCongestionTree:
        list = tree_contributions(e);
        break;
    }
    contributions_.push_back(std::move(list));
  }
}

// The root first, then the victims (ratio > 0), then ports that only carry
// load (a leaf's other up ports).
std::vector<ScenarioDriver::Contribution> ScenarioDriver::tree_contributions(
    const Effect& e) const {
  const auto& nodes = fabric_.nodes();
  auto level = [&](int node) { return tier_level(nodes[static_cast<std::size_t>(node)].role); };
  const std::size_t root = port_index(e.node, e.port);
  const int a = ports_[root].node;
  std::vector<Contribution> list{{root, e.load, e.root_ratio, false}};
  const int rail = nodes[static_cast<std::size_t>(a)].rail;
  // Ports feeding `via`'s node whose traffic may leave through `via`: it
  // came up (from a lower node), or `via` leads down. HCAs feed only when
  // `hcas`.
  auto feeders = [&](std::size_t via, bool hcas) {
    const int n = ports_[via].node;
    const bool via_down = level(ports_[ports_[via].peer].node) < level(n);
    std::vector<std::size_t> out;
    for (std::size_t p : index_[static_cast<std::size_t>(n)]) {
      if (p == kNone || p == via) continue;
      const std::size_t in = ports_[p].peer;
      const int from = ports_[in].node;
      if (from == a && via != root) continue;  // back towards the root's switch
      const bool came_up = level(from) < level(n);
      if (level(from) == 0 && !hcas) continue;
      // Rail-optimized: traffic for the root's rail comes from its rail's
      // leaves only (cross-rail traffic stays inside the hosts).
      const int from_rail = nodes[static_cast<std::size_t>(from)].rail;
      if (rail != -1 && from_rail != -1 && from_rail != rail && level(from) == 1) continue;
      if (came_up || via_down) out.push_back(in);
    }
    return out;
  };
  const bool root_up = level(ports_[ports_[root].peer].node) > level(a);
  std::set<std::size_t> seen{root};
  for (std::size_t first : feeders(root, root_up)) {
    if (!seen.insert(first).second) continue;
    list.push_back({first, 0.0, e.ratio, false});
    if (level(ports_[first].node) == 0) continue;  // an HCA: nothing feeds it
    for (std::size_t second : feeders(first, false)) {
      if (seen.insert(second).second) list.push_back({second, 0.0, e.ratio * e.spread, false});
    }
  }
  // HCAs named as the tree's senders move data into it and wait as its
  // second level does; those named as stalled only wait (their sends share
  // the tree's links).
  for (const std::string& hca : e.targets) {
    const std::size_t p = port_index(hca, 1);
    if (seen.insert(p).second) list.push_back({p, e.sender_load, e.ratio * e.spread, false});
  }
  for (const std::string& hca : e.stalled) {
    const std::size_t p = port_index(hca, 1);
    if (seen.insert(p).second) list.push_back({p, 0.0, e.ratio * e.spread, false});
  }
  if (root_up) {
    const double others = e.cause == "oversubscribed" ? 0.88 * e.load : 0.03;
    for (std::size_t p : index_[static_cast<std::size_t>(a)]) {
      if (p == kNone || p == root) continue;
      if (level(ports_[ports_[p].peer].node) > level(a)) list.push_back({p, others, 0.0, false});
    }
  }
  return list;
}

std::vector<CongestionTree> ScenarioDriver::congestion_trees() const {
  std::vector<CongestionTree> out;
  auto name = [&](std::size_t p) {
    return PortName{fabric_.node(ports_[p].node).name, ports_[p].port};
  };
  for (std::size_t i = 0; i < scenario_.effects.size(); ++i) {
    const Effect& e = scenario_.effects[i];
    if (e.type != EffectType::kCongestionTree) continue;
    CongestionTree t;
    t.effect = i;
    t.cause = e.cause;
    t.start = e.start;
    t.end = e.end;
    t.root = name(contributions_[i][0].port);
    for (std::size_t c = 1; c < contributions_[i].size(); ++c) {
      if (contributions_[i][c].ratio > 0) t.victims.push_back(name(contributions_[i][c].port));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::size_t ScenarioDriver::pending_lines(const PortState& state) const {
  const PortTotals& t = state.totals;
  const std::uint64_t now[kCounterCount] = {t.xmit_words,
                                            t.rcv_words,
                                            t.xmit_pkts,
                                            t.rcv_pkts,
                                            std::min(t.xmit_wait, kXmitWaitMax),
                                            std::min(t.symbol_errors, kSymbolErrorMax),
                                            std::min(t.link_downed, kLinkDownedMax)};
  std::size_t lines = 0;
  for (int c = 0; c < kCounterCount; ++c) lines += now[c] != state.sent[c] ? 1 : 0;
  return lines;
}

void ScenarioDriver::emit_port(PortState& state, std::vector<std::string>& out) {
  const PortTotals& t = state.totals;
  // The hardware widths: what a PMA would answer for these totals.
  const std::uint64_t now[kCounterCount] = {t.xmit_words,
                                            t.rcv_words,
                                            t.xmit_pkts,
                                            t.rcv_pkts,
                                            std::min(t.xmit_wait, kXmitWaitMax),
                                            std::min(t.symbol_errors, kSymbolErrorMax),
                                            std::min(t.link_downed, kLinkDownedMax)};
  const std::string target = quoted_port(fabric_.node(state.node).name, state.port);
  for (int c = 0; c < kCounterCount; ++c) {
    if (now[c] == state.sent[c]) continue;
    out.push_back("PerformanceSet " + target + " " + kCounterAttribute[c] + "=" +
                  std::to_string(now[c]));
    state.sent[c] = now[c];
  }
}

std::vector<std::string> ScenarioDriver::step() {
  std::vector<std::string> out;
  if (done()) return out;
  const double t0 = time_;
  const double t1 = std::min(scenario_.duration, t0 + scenario_.tick);
  const double dt = t1 - t0;
  const std::size_t tick = ticks_;
  const auto& effects = scenario_.effects;

  std::vector<double> load(ports_.size(), 0.0);
  std::vector<double> wait(ports_.size(), 0.0);
  std::vector<double> down(ports_.size(), 0.0);  // seconds of this tick the link was down
  std::vector<char> hot(ports_.size(), 0);

  // Link events: Unlink in [t0, t1), ReLink in (t0, t1], so a link is never
  // left down by the tick that ends an effect.
  struct Event {
    double time;
    std::size_t effect;
    bool unlink;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < effects.size(); ++i) {
    const Effect& e = effects[i];
    if (e.type != EffectType::kFlap || overlap(e.start, e.end, t0, t1) <= 0) continue;
    const std::size_t a = contributions_[i][0].port;
    const std::size_t b = contributions_[i][1].port;
    hot[a] = hot[b] = 1;
    const long long first =
        std::max(0LL, static_cast<long long>(std::floor((t0 - e.start) / e.period)) - 1);
    for (long long k = first;; ++k) {
      const double down_at = e.start + static_cast<double>(k) * e.period;
      if (down_at >= t1 || down_at >= e.end) break;
      const double up_at = std::min(down_at + e.down_time, e.end);
      const double seconds = overlap(down_at, up_at, t0, t1);
      down[a] += seconds;
      down[b] += seconds;
      if (down_at >= t0) events.push_back({down_at, i, true});
      if (up_at > t0 && up_at <= t1) events.push_back({up_at, i, false});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& x, const Event& y) { return x.time < y.time; });
  for (const Event& ev : events) {
    const Effect& e = effects[ev.effect];
    const std::size_t a = contributions_[ev.effect][0].port;
    const std::size_t b = contributions_[ev.effect][1].port;
    out.push_back((ev.unlink ? "Unlink " : "ReLink ") + quoted_port(e.node, e.port));
    ports_[a].up = ports_[b].up = !ev.unlink;
    if (ev.unlink) {
      ++ports_[a].totals.link_downed;
      ++ports_[b].totals.link_downed;
    }
  }

  for (std::size_t i = 0; i < effects.size(); ++i) {
    const Effect& e = effects[i];
    const double share = overlap(e.start, e.end, t0, t1) / dt;
    if (share <= 0 || e.type == EffectType::kFlap) continue;
    for (const Contribution& c : contributions_[i]) {
      double factor = share;
      if (c.noisy) factor *= 1.0 + e.noise * noise_unit(scenario_.seed, i, c.port, tick);
      load[c.port] += c.load * factor;
      wait[c.port] = std::max(wait[c.port], std::min(1.0, c.ratio * factor));
      if (e.type == EffectType::kSymbolErrors) {
        ports_[c.port].symbol_errors.add(e.rate * share * dt * (1.0 - down[c.port] / dt),
                                         ports_[c.port].totals.symbol_errors);
      }
      if (!is_background(e.type)) hot[c.port] = 1;
    }
  }

  // Measurement noise: salts beyond any effect index keep it independent of
  // the effects' own noise.
  if (scenario_.jitter > 0 || scenario_.read_skew > 0) {
    constexpr std::size_t kJitterSalt = 1ULL << 40, kSkewSalt = (1ULL << 40) + 1;
    for (std::size_t p = 0; p < ports_.size(); ++p) {
      const double factor =
          (1.0 + scenario_.jitter * noise_unit(scenario_.seed, kJitterSalt, p, tick)) *
          (1.0 + scenario_.read_skew * noise_unit(scenario_.seed, kSkewSalt,
                                                  static_cast<std::size_t>(ports_[p].node), tick));
      load[p] = std::min(1.0, load[p] * factor);
      wait[p] = std::min(1.0, wait[p] * factor);
    }
  }

  const double wait_ticks_per_second = 1e9 / scenario_.xmit_wait_tick_ns;
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    PortState& s = ports_[p];
    const double up_seconds = dt - std::min(dt, down[p]);
    const double bytes = std::min(1.0, load[p]) * kLineRateBytesPerSecond * up_seconds;
    s.xmit_words.add(bytes / 4, s.totals.xmit_words);
    s.xmit_pkts.add(bytes / kPacketBytes, s.totals.xmit_pkts);
    s.xmit_wait.add(wait[p] * up_seconds * wait_ticks_per_second, s.totals.xmit_wait);
  }
  for (PortState& s : ports_) {
    s.totals.rcv_words = ports_[s.peer].totals.xmit_words;
    s.totals.rcv_pkts = ports_[s.peer].totals.xmit_pkts;
  }

  // Fault ports always; background ports round-robin within the budget.
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    if (hot[p]) emit_port(ports_[p], out);
  }
  const std::size_t budget = scenario_.max_commands_per_tick;
  for (std::size_t n = 0; n < ports_.size(); ++n) {
    const std::size_t p = (cursor_ + n) % ports_.size();
    if (hot[p]) continue;
    const std::size_t lines = pending_lines(ports_[p]);
    if (lines == 0) continue;
    if (budget != 0 && out.size() + lines > budget) {
      cursor_ = p;  // resume here next tick
      break;
    }
    emit_port(ports_[p], out);
  }

  time_ = t1;
  ++ticks_;
  return out;
}

std::vector<std::string> ScenarioDriver::cleanup() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scenario_.effects.size(); ++i) {
    const Effect& e = scenario_.effects[i];
    if (e.type != EffectType::kFlap) continue;
    const std::size_t a = contributions_[i][0].port;
    if (ports_[a].up) continue;
    out.push_back("ReLink " + quoted_port(e.node, e.port));
    ports_[a].up = ports_[contributions_[i][1].port].up = true;
  }
  return out;
}

std::vector<Culprit> ScenarioDriver::expected_culprits() const {
  std::vector<Culprit> out;
  for (std::size_t i = 0; i < scenario_.effects.size(); ++i) {
    const Effect& e = scenario_.effects[i];
    Culprit c;
    c.effect = i;
    c.type = e.type;
    c.start = e.start;
    c.end = e.end;
    switch (e.type) {
      case EffectType::kAllreduce:
      case EffectType::kCrossRail:
        break;
      case EffectType::kIncast:
        // The bottleneck is the last hop: the leaf ports towards the targets.
        for (const std::string& target : e.targets) {
          const PortRef leaf = fabric_.node(fabric_.find(target)).ports[1];
          c.node = fabric_.node(leaf.node).name;
          c.port = leaf.port;
          c.counter = "PortXmitWait";
          c.value = e.ratio;
          out.push_back(c);
        }
        break;
      case EffectType::kCongestedPort:
        c.node = e.node;
        c.port = e.port;
        c.counter = "PortXmitWait";
        c.value = e.ratio;
        out.push_back(c);
        break;
      case EffectType::kSymbolErrors:
        c.node = e.node;
        c.port = e.port;
        c.counter = "SymbolErrorCounter";
        c.value = e.rate;
        out.push_back(c);
        break;
      case EffectType::kCongestionTree:
        // The root: full (PortXmitData) or, for a slow receiver, stalled.
        c.node = e.node;
        c.port = e.port;
        c.counter = e.cause == "slow_receiver" ? "PortXmitWait" : "PortXmitData";
        c.value = e.cause == "slow_receiver" ? e.root_ratio : e.load;
        out.push_back(c);
        break;
      case EffectType::kFlap: {
        c.counter = "LinkDownedCounter";
        c.value = 1.0 / e.period;
        c.node = e.node;
        c.port = e.port;
        out.push_back(c);
        const PortRef peer =
            fabric_.node(fabric_.find(e.node)).ports[static_cast<std::size_t>(e.port)];
        c.node = fabric_.node(peer.node).name;
        c.port = peer.port;
        out.push_back(c);
        break;
      }
    }
  }
  return out;
}

double ScenarioDriver::expected_wait_ratio(const std::string& node, int port, double t) const {
  const std::size_t p = port_index(node, port);
  double w = 0;
  for (std::size_t i = 0; i < scenario_.effects.size(); ++i) {
    const Effect& e = scenario_.effects[i];
    if (t < e.start || t >= e.end) continue;
    for (const Contribution& c : contributions_[i]) {
      if (c.port == p) w = std::max(w, c.ratio);
    }
  }
  return w;
}

const PortTotals& ScenarioDriver::totals(const std::string& node, int port) const {
  return ports_[port_index(node, port)].totals;
}

}  // namespace ibfx::test
