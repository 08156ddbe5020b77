#include "analysis/topology.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <map>
#include <regex>
#include <set>

#include "config/config.h"
#include "config/user_regex.h"
#include "config/yaml_reader.h"

namespace ibfx {
namespace {

// The highest rank that has a name; a fabric with more tiers than this is
// not a 3-tier fat tree and its upper switches are reported as unknown.
constexpr int kMaxRank = 2;

struct CompiledRules {
  std::regex rail_regex;
  std::vector<std::pair<std::regex, int>> rail_by_name;
  std::vector<std::pair<std::regex, Tier>> tier_by_name;
};

std::regex compile(const std::string& pattern, std::string_view what) {
  try {
    return compile_user_regex(pattern);
  } catch (const UserRegexError& e) {
    throw ConfigError("topology." + std::string(what) + ": " + e.what());
  }
}

CompiledRules compile_rules(const TopologyConfig& config) {
  CompiledRules rules;
  rules.rail_regex = compile(config.rail_regex, "rail_regex");
  for (const auto& [pattern, rail] : config.rail_by_name)
    rules.rail_by_name.emplace_back(compile(pattern, "rail_by_name"), rail);
  for (const auto& [pattern, tier] : config.tier_by_name)
    rules.tier_by_name.emplace_back(compile(pattern, "tier_by_name"), tier);
  return rules;
}

// The first capture group as a non-negative decimal, or kNoRail.
int rail_from_name(const std::regex& re, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(name, m, re) || m.size() < 2 || !m[1].matched) return kNoRail;
  const std::string digits = m[1].str();
  int rail = kNoRail;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rail);
  if (ec != std::errc() || end != digits.data() + digits.size() || rail < 0) return kNoRail;
  return rail;
}

int tier_rank(Tier t) {
  switch (t) {
    case Tier::kLeaf:
      return 0;
    case Tier::kSpine:
      return 1;
    case Tier::kCore:
      return 2;
    default:
      return -1;
  }
}

Tier tier_of_rank(int rank) {
  switch (rank) {
    case 0:
      return Tier::kLeaf;
    case 1:
      return Tier::kSpine;
    case 2:
      return Tier::kCore;
    default:
      return Tier::kUnknown;
  }
}

// classify_topology's steps (docs/scores.md, "Topology"): the configured rules, the
// leaves, the ranks above them and the tiers they give, then each node's
// rail, each port's direction, the miscabled HCAs and the single-rail
// switches. Each step reads what the steps before it wrote.
class TopologyClassifier {
 public:
  TopologyClassifier(const Fabric& fabric, const std::vector<std::string>& node_names,
                     const TopologyConfig& config)
      : nodes_(fabric.nodes),
        node_names_(node_names),
        config_(config),
        rules_(compile_rules(config)),
        n_(fabric.nodes.size()),
        forced_tier_(n_),
        forced_rail_(n_),
        hca_links_(n_, 0),
        seed_(n_, false),
        rank_(n_, -1) {}

  Topology classify() {
    topo_.tier.assign(n_, Tier::kUnknown);
    topo_.rail.assign(n_, kNoRail);
    topo_.single_rail.assign(n_, kNoRail);
    topo_.direction.resize(n_);
    apply_configured_rules();
    choose_leaf_seeds();
    rank_from_leaves();
    assign_switch_tiers();
    assign_leaf_rails();
    assign_port_directions();
    find_miscabled_hcas();
    find_single_rails();
    return std::move(topo_);
  }

 private:
  const std::string& name_of(std::size_t i) const {
    return i < node_names_.size() && !node_names_[i].empty() ? node_names_[i]
                                                             : nodes_[i].description;
  }
  bool valid_remote(const FabricPort& p) const {
    return p.remote_node >= 0 && static_cast<std::size_t>(p.remote_node) < n_;
  }
  bool is_hca(std::size_t i) const { return nodes_[i].type == NodeType::kHca; }

  // Configured tiers (switches and other non-HCA nodes only) and rails; an
  // HCA's tier is known and its rail configured or read from its name.
  void apply_configured_rules() {
    for (std::size_t i = 0; i < n_; ++i) {
      const std::string& name = name_of(i);
      if (const auto it = config_.rail_by_guid.find(nodes_[i].guid);
          it != config_.rail_by_guid.end()) {
        forced_rail_[i] = it->second;
      } else {
        for (const auto& [re, rail] : rules_.rail_by_name) {
          if (std::regex_search(name, re)) {
            forced_rail_[i] = rail;
            break;
          }
        }
      }
      if (is_hca(i)) {
        topo_.tier[i] = Tier::kHca;
        topo_.rail[i] =
            forced_rail_[i] ? *forced_rail_[i] : rail_from_name(rules_.rail_regex, name);
        continue;
      }
      if (const auto it = config_.tier_by_guid.find(nodes_[i].guid);
          it != config_.tier_by_guid.end()) {
        forced_tier_[i] = it->second;
      } else {
        for (const auto& [re, tier] : rules_.tier_by_name) {
          if (std::regex_search(name, re)) {
            forced_tier_[i] = tier;
            break;
          }
        }
      }
      // An HCA tier cannot be given to a switch: it would break the port
      // directions of everything cabled to it.
      if (forced_tier_[i] == Tier::kHca) forced_tier_[i] = Tier::kUnknown;
    }
  }

  // The leaves BFS starts from: configured leaves, and switches with at least
  // one HCA cabled to them (candidates) that are not spines in disguise.
  void choose_leaf_seeds() {
    std::vector<bool> candidate(n_, false);
    for (std::size_t i = 0; i < n_; ++i) {
      if (nodes_[i].type != NodeType::kSwitch) continue;
      for (const FabricPort& p : nodes_[i].ports) {
        if (valid_remote(p) && is_hca(static_cast<std::size_t>(p.remote_node))) ++hca_links_[i];
      }
      candidate[i] = hca_links_[i] > 0 && !forced_tier_[i];
    }
    // A spine carrying a management HCA would otherwise be a leaf cabled to a
    // whole pod of leaves. Such a candidate is demoted when it reaches at least
    // two other candidates and more of them than it has HCA links: a real
    // leaf has many HCAs and at most a few HCA-carrying spines above it.
    for (std::size_t i = 0; i < n_; ++i) {
      if (forced_tier_[i]) {
        seed_[i] = *forced_tier_[i] == Tier::kLeaf;
        continue;
      }
      if (!candidate[i]) continue;
      std::set<std::int32_t> leafy;
      for (const FabricPort& p : nodes_[i].ports) {
        if (!valid_remote(p) || static_cast<std::size_t>(p.remote_node) == i) continue;
        const auto r = static_cast<std::size_t>(p.remote_node);
        if (candidate[r] || forced_tier_[r] == Tier::kLeaf) leafy.insert(p.remote_node);
      }
      const int leafy_count = static_cast<int>(leafy.size());
      seed_[i] = !(leafy_count >= 2 && leafy_count > hca_links_[i]);
    }
  }

  // Rank by BFS from the leaves over switch-to-switch links, as OpenSM's
  // fat-tree routing does.
  void rank_from_leaves() {
    std::deque<std::size_t> queue;
    for (std::size_t i = 0; i < n_; ++i) {
      if (seed_[i]) {
        rank_[i] = 0;
        queue.push_back(i);
      }
    }
    while (!queue.empty()) {
      const std::size_t i = queue.front();
      queue.pop_front();
      for (const FabricPort& p : nodes_[i].ports) {
        if (!valid_remote(p)) continue;
        const auto r = static_cast<std::size_t>(p.remote_node);
        if (nodes_[r].type != NodeType::kSwitch || rank_[r] >= 0) continue;
        rank_[r] = rank_[i] + 1;
        queue.push_back(r);
      }
    }
  }

  // Configured tiers win; else a switch's rank names its tier, unless the
  // ranking is inconsistent around it.
  void assign_switch_tiers() {
    // In a fat tree every link between non-leaf switches joins adjacent ranks;
    // a link inside one rank (odd rings, meshes) means the ranking is
    // meaningless for both ends. Leaves stay leaves: their HCAs define them.
    std::vector<bool> inconsistent(n_, false);
    for (std::size_t i = 0; i < n_; ++i) {
      if (rank_[i] > kMaxRank) inconsistent[i] = true;
      if (rank_[i] < 1) continue;
      for (const FabricPort& p : nodes_[i].ports) {
        if (!valid_remote(p)) continue;
        const auto r = static_cast<std::size_t>(p.remote_node);
        if (r != i && rank_[r] == rank_[i]) inconsistent[i] = true;
      }
    }
    for (std::size_t i = 0; i < n_; ++i) {
      if (is_hca(i)) continue;
      if (forced_tier_[i]) {
        topo_.tier[i] = *forced_tier_[i];
      } else if (nodes_[i].type == NodeType::kSwitch && rank_[i] >= 0 && !inconsistent[i]) {
        topo_.tier[i] = tier_of_rank(rank_[i]);
      }
    }
  }

  // Leaf rails: configured, else the majority of the HCAs' rails (ties go to
  // the lowest rail number, so the answer is stable across discoveries).
  void assign_leaf_rails() {
    for (std::size_t i = 0; i < n_; ++i) {
      if (topo_.tier[i] != Tier::kLeaf) continue;
      if (forced_rail_[i]) {
        topo_.rail[i] = *forced_rail_[i];
        continue;
      }
      std::map<int, int> votes;
      for (const FabricPort& p : nodes_[i].ports) {
        if (!valid_remote(p)) continue;
        const auto r = static_cast<std::size_t>(p.remote_node);
        if (is_hca(r) && topo_.rail[r] != kNoRail) ++votes[topo_.rail[r]];
      }
      int best = kNoRail;
      int best_votes = 0;
      for (const auto& [rail, count] : votes) {
        if (count > best_votes) {
          best = rail;
          best_votes = count;
        }
      }
      topo_.rail[i] = best;
    }
  }

  void assign_port_directions() {
    for (std::size_t i = 0; i < n_; ++i) {
      auto& dirs = topo_.direction[i];
      dirs.reserve(nodes_[i].ports.size());
      for (const FabricPort& p : nodes_[i].ports) {
        if (is_hca(i)) {
          dirs.push_back(PortDirection::kHost);
        } else if (!valid_remote(p)) {
          dirs.push_back(PortDirection::kNone);
        } else if (is_hca(static_cast<std::size_t>(p.remote_node))) {
          dirs.push_back(PortDirection::kDown);
        } else {
          const int mine = tier_rank(topo_.tier[i]);
          const int theirs = tier_rank(topo_.tier[static_cast<std::size_t>(p.remote_node)]);
          if (mine < 0 || theirs < 0 || mine == theirs) {
            dirs.push_back(PortDirection::kPeer);
          } else {
            dirs.push_back(theirs > mine ? PortDirection::kUp : PortDirection::kDown);
          }
        }
      }
    }
  }

  // Miscabled HCAs: on a leaf of another rail.
  void find_miscabled_hcas() {
    for (std::size_t i = 0; i < n_; ++i) {
      if (topo_.tier[i] != Tier::kLeaf || topo_.rail[i] == kNoRail) continue;
      for (const FabricPort& p : nodes_[i].ports) {
        if (!valid_remote(p)) continue;
        const auto r = static_cast<std::size_t>(p.remote_node);
        if (!is_hca(r) || topo_.rail[r] == kNoRail || topo_.rail[r] == topo_.rail[i]) continue;
        topo_.miscabled.push_back(MiscabledHca{p.remote_node, p.remote_port,
                                               static_cast<std::int32_t>(i), p.number,
                                               topo_.rail[i], topo_.rail[r]});
      }
    }
    std::sort(topo_.miscabled.begin(), topo_.miscabled.end(),
              [](const MiscabledHca& a, const MiscabledHca& b) {
                return std::pair(a.hca_node, a.hca_port) < std::pair(b.hca_node, b.hca_port);
              });
  }

  // single_rail, bottom-up: HCAs and leaves serve their own rail; a spine or
  // core serves one rail only when every switch below it does.
  void find_single_rails() {
    for (std::size_t i = 0; i < n_; ++i) {
      if (topo_.tier[i] == Tier::kHca || topo_.tier[i] == Tier::kLeaf) {
        topo_.single_rail[i] = topo_.rail[i];
      }
    }
    for (Tier t : {Tier::kSpine, Tier::kCore}) {
      for (std::size_t i = 0; i < n_; ++i) {
        if (topo_.tier[i] != t) continue;
        int rail = kNoRail;
        bool mixed = false;
        bool any = false;
        for (std::size_t j = 0; j < nodes_[i].ports.size(); ++j) {
          const FabricPort& p = nodes_[i].ports[j];
          if (topo_.direction[i][j] != PortDirection::kDown) continue;
          const auto r = static_cast<std::size_t>(p.remote_node);
          if (is_hca(r)) continue;  // a management HCA does not make a rail
          const int below = topo_.single_rail[r];
          if (below == kNoRail || (any && below != rail)) mixed = true;
          rail = below;
          any = true;
        }
        topo_.single_rail[i] = any && !mixed ? rail : kNoRail;
      }
    }
  }

  const std::vector<FabricNode>& nodes_;
  const std::vector<std::string>& node_names_;
  const TopologyConfig& config_;
  const CompiledRules rules_;
  const std::size_t n_;
  Topology topo_;
  std::vector<std::optional<Tier>> forced_tier_;
  std::vector<std::optional<int>> forced_rail_;
  std::vector<int> hca_links_;  // per switch: the HCAs cabled to it
  std::vector<bool> seed_;      // leaves the ranking starts from
  std::vector<int> rank_;       // hops from the nearest seed, -1 if none
};

}  // namespace

std::string_view tier_name(Tier t) {
  switch (t) {
    case Tier::kHca:
      return "hca";
    case Tier::kLeaf:
      return "leaf";
    case Tier::kSpine:
      return "spine";
    case Tier::kCore:
      return "core";
    case Tier::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<Tier> parse_tier(std::string_view name) {
  for (Tier t : {Tier::kHca, Tier::kLeaf, Tier::kSpine, Tier::kCore, Tier::kUnknown}) {
    if (tier_name(t) == name) return t;
  }
  return std::nullopt;
}

std::string_view direction_name(PortDirection d) {
  switch (d) {
    case PortDirection::kUp:
      return "up";
    case PortDirection::kDown:
      return "down";
    case PortDirection::kHost:
      return "host";
    case PortDirection::kPeer:
      return "peer";
    case PortDirection::kNone:
      break;
  }
  return "none";
}

std::size_t Topology::count(Tier t) const {
  return static_cast<std::size_t>(std::count(tier.begin(), tier.end(), t));
}

Topology classify_topology(const Fabric& fabric, const std::vector<std::string>& node_names,
                           const TopologyConfig& config) {
  return TopologyClassifier(fabric, node_names, config).classify();
}

TopologyConfig parse_topology_config(const YAML::Node& node, const std::string& source) {
  TopologyConfig config;
  if (!node.IsDefined() || node.IsNull()) return config;
  const yaml::SectionReader reader(node, source, "topology");
  reader.for_each_entry(node, [&](const std::string& key, int line, const YAML::Node& value) {
    if (key == "rail_regex") {
      const std::string& pattern = reader.scalar(value, line, key);
      const std::regex re = reader.regex(pattern, reader.line_of(value, line), key);
      if (re.mark_count() < 1) {
        reader.fail(reader.line_of(value, line), key,
                    "\"" + pattern + "\" needs a capture group for the rail number");
      }
      config.rail_regex = pattern;
    } else if (key == "rail_by_guid" || key == "rail_by_name" || key == "tier_by_guid" ||
               key == "tier_by_name") {
      reader.require_map(value, line, key);
      if (value.IsNull()) return;
      const bool by_guid = key.ends_with("guid");
      const bool rail = key.starts_with("rail");
      for (const auto& item : value) {
        const int item_line = reader.line_of(item.first, line);
        const std::string match = reader.key(item.first);
        std::uint64_t guid = 0;
        if (by_guid) {
          guid = reader.guid(match, item_line, key);
        } else {
          reader.regex(match, item_line, key);
        }
        const int value_line = reader.line_of(item.second, item_line);
        if (rail) {
          const int r = static_cast<int>(reader.integer(item.second, value_line, key, 0, 65535));
          if (by_guid) {
            config.rail_by_guid[guid] = r;
          } else {
            config.rail_by_name.emplace_back(match, r);
          }
          continue;
        }
        const std::string& text = reader.scalar(item.second, value_line, key);
        const std::optional<Tier> tier = parse_tier(text);
        if (!tier || *tier == Tier::kHca) {
          reader.fail(value_line, key,
                      "invalid tier \"" + text + "\" (expected leaf, spine, core or unknown)");
        }
        if (by_guid) {
          config.tier_by_guid[guid] = *tier;
        } else {
          config.tier_by_name.emplace_back(match, *tier);
        }
      }
    } else {
      reader.fail(line, key, "unknown key");
    }
  });
  return config;
}

}  // namespace ibfx
