#include "nodes/node_health.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <utility>

#include "config/config_error.h"
#include "config/user_regex.h"

namespace ibfx {
namespace {

// The conditions that take a host out of service. ber_warning does not:
// the link works, and the warning band is where a cable is watched, not
// pulled (docs/links.md); nor does length_outlier, which never alarms.
bool drains(LinkCondition c) { return link_condition_alarms(c) && c != LinkCondition::kBerWarning; }

// "02:13Z": the day is the one the drain shows next to it in sinfo.
std::string clock_text(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  if (unix_seconds <= 0 || gmtime_r(&t, &tm) == nullptr) return "?";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d:%02dZ", tm.tm_hour, tm.tm_min);
  return buf;
}

void cap_reason(std::string& reason) {
  if (reason.size() > kNodeReasonMax) reason.resize(kNodeReasonMax);
}

}  // namespace

std::string_view node_verdict_name(NodeVerdict v) {
  switch (v) {
    case NodeVerdict::kHealthy:
      return "healthy";
    case NodeVerdict::kUnhealthy:
      return "unhealthy";
    case NodeVerdict::kIncident:
      return "fabric incident";
    case NodeVerdict::kUnknown:
      break;
  }
  return "unknown";
}

const HostHealth* NodeHealthReport::find(std::string_view host) const {
  const auto it =
      std::lower_bound(hosts.begin(), hosts.end(), host,
                       [](const HostHealth& h, std::string_view n) { return h.host < n; });
  return it != hosts.end() && it->host == host ? &*it : nullptr;
}

std::string host_family(std::string_view host) {
  std::string out;
  for (const char c : host) {
    if (c >= '0' && c <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += c;
    }
  }
  return out;
}

NodeHealthTracker::NodeHealthTracker(JobJoinConfig hosts, NodesConfig config)
    : hosts_(std::move(hosts)), config_(config) {
  try {
    host_re_ = compile_user_regex(hosts_.host_regex);
  } catch (const UserRegexError& e) {
    throw ConfigError(std::string("jobs.host_regex: ") + e.what());
  }
  // host_map maps a Slurm name to its descriptions' host; the fabric is
  // read the other way.
  for (const auto& [slurm, described] : hosts_.host_map) slurm_name_[described] = slurm;
}

void NodeHealthTracker::take_settings(NodeHealthTracker&& fresh) {
  hosts_ = std::move(fresh.hosts_);
  config_ = fresh.config_;
  host_re_ = std::move(fresh.host_re_);
  slurm_name_ = std::move(fresh.slurm_name_);
}

std::string NodeHealthTracker::host_of(const std::string& description) const {
  std::smatch m;
  if (!std::regex_search(description, m, host_re_) || m.size() < 2) return {};
  const std::string host = m[1].str();
  const auto it = slurm_name_.find(host);
  return it == slurm_name_.end() ? host : it->second;
}

namespace {

std::uint64_t port_key(std::int32_t node, std::int32_t port_index) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(node)) << 32) |
         static_cast<std::uint32_t>(port_index);
}

// A host's expected rail count: the modal count of HCA ports among its peers
// (hosts of its family; ties: the larger), so that a host whose HCA never
// came up (and so was never discovered) shows "7 of 8 rails" though no
// counter moved.
std::unordered_map<std::string, std::size_t> modal_rail_counts(
    const std::map<std::string, HostHealth>& hosts) {
  std::unordered_map<std::string, std::map<std::size_t, std::size_t>> counts;
  for (const auto& [name, h] : hosts) ++counts[host_family(name)][h.ports.size()];
  std::unordered_map<std::string, std::size_t> modal;
  for (const auto& [family, histogram] : counts) {
    std::size_t best = 0;
    std::size_t seen = 0;
    for (const auto& [ports, n] : histogram) {
      if (n >= seen) {
        best = ports;
        seen = n;
      }
    }
    modal[family] = best;
  }
  return modal;
}

// The reason a host is unhealthy now ("" if it is not): its worst draining
// port with the cable's far end, how many more, and missing rails.
std::string fault_reason(const HostHealth& h, const Fabric& f,
                         const std::vector<std::string>& names, double now) {
  const HcaPortHealth* worst_port = nullptr;
  std::size_t faults = 0;
  for (const HcaPortHealth& p : h.ports) {
    if (!drains(p.condition)) continue;
    ++faults;
    if (!worst_port || p.condition > worst_port->condition) worst_port = &p;
  }
  std::string reason;
  if (worst_port) {
    reason = std::string(kNodeReasonPrefix) + " " + worst_port->device + " " +
             std::string(link_condition_name(worst_port->condition));
    if (worst_port->far_node != kNoNode &&
        static_cast<std::size_t>(worst_port->far_node) < f.nodes.size()) {
      const auto far = static_cast<std::size_t>(worst_port->far_node);
      const std::string& far_name =
          far < names.size() && !names[far].empty() ? names[far] : f.nodes[far].description;
      reason += " (" + safe_node_word(far_name) + " p" + std::to_string(worst_port->far_port) + ")";
    }
    reason +=
        " since " + clock_text(worst_port->condition_since > 0 ? worst_port->condition_since : now);
    if (faults > 1) reason += " +" + std::to_string(faults - 1) + " more";
  }
  if (h.rails_active < h.rails_expected) {
    reason += (reason.empty() ? std::string(kNodeReasonPrefix) : std::string(",")) + " " +
              std::to_string(h.rails_active) + " of " + std::to_string(h.rails_expected) +
              " rails active";
  }
  cap_reason(reason);
  return reason;
}

}  // namespace

struct NodeHealthTracker::LinkIndex {
  std::unordered_map<std::uint64_t, const LinkReport*> link_at;  // port_key of an HCA end
  std::unordered_map<std::uint64_t, double> ber_at;

  explicit LinkIndex(const LinkHealthReport& links) {
    for (const LinkReport& l : links.links) {
      for (const LinkEnd* end : {&l.a, &l.b}) {
        if (end->node != kNoNode && end->port_index >= 0)
          link_at[port_key(end->node, end->port_index)] = &l;
      }
    }
    for (const PortBer& b : links.port_ber) {
      ber_at[port_key(b.node, static_cast<std::int32_t>(b.port_index))] = b.ber;
    }
  }
};

std::shared_ptr<const NodeHealthReport> NodeHealthTracker::judge(
    const std::shared_ptr<const Fabric>& fabric, const LinkHealthReport& links,
    const std::vector<std::string>& names, const Topology* topology, double now) {
  auto report = std::make_shared<NodeHealthReport>();
  report->recover_after_seconds = seconds_of(config_.recover_after);
  report->stale_after_seconds = seconds_of(config_.stale_after);
  if (!fabric) return report;
  Hosts hosts = collect_hosts(*fabric, LinkIndex(links), topology);
  update_spells(hosts, *fabric, names, now);
  const std::size_t incident_hosts = mark_incidents(hosts.size(), now);
  give_verdicts(hosts, incident_hosts, now, *report);
  return report;
}

// Each host's HCA ports, with the condition of their cables.
NodeHealthTracker::Hosts NodeHealthTracker::collect_hosts(const Fabric& f, const LinkIndex& links,
                                                          const Topology* topology) const {
  Hosts by_host;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    const FabricNode& node = f.nodes[n];
    if (node.type != NodeType::kHca) continue;
    std::string host = host_of(node.description);
    if (host.empty()) continue;
    HostHealth& h = by_host[host];
    h.host = std::move(host);
    std::smatch m;
    std::string device;
    if (std::regex_search(node.description, m, host_re_)) device = m.suffix().str();
    device = safe_node_word(device.empty() ? std::string_view("hca") : std::string_view(device));
    for (std::size_t p = 0; p < node.ports.size(); ++p) {
      const FabricPort& port = node.ports[p];
      HcaPortHealth hp;
      hp.node = static_cast<std::int32_t>(n);
      hp.port_index = static_cast<std::uint32_t>(p);
      hp.port = port.number;
      hp.device = device;
      if (topology && n < topology->rail.size()) hp.rail = topology->rail[n];
      hp.far_node = port.remote_node;
      hp.far_port = port.remote_port;
      const std::uint64_t key = port_key(hp.node, static_cast<std::int32_t>(p));
      if (const auto l = links.link_at.find(key); l != links.link_at.end()) {
        const LinkReport& r = *l->second;
        hp.condition = r.condition;
        hp.condition_since = r.since;
        hp.downs_last_hour = r.downs_last_hour;
        const LinkEnd& far =
            r.a.node == hp.node && r.a.port_index == static_cast<int>(p) ? r.b : r.a;
        if (far.node != kNoNode) {
          hp.far_node = far.node;
          hp.far_port = far.port;
        }
      }
      if (const auto b = links.ber_at.find(key); b != links.ber_at.end()) hp.ber = b->second;
      hp.active = node.present && port.up() && hp.condition != LinkCondition::kDown;
      h.ports.push_back(std::move(hp));
    }
  }
  return by_host;
}

// Each host's rails and faults now: a fault opens or extends its spell, a
// spell ends recover_after past its last fault, and a host gone from the
// fabric takes its spell with it (unknown, not healthy).
void NodeHealthTracker::update_spells(Hosts& hosts, const Fabric& f,
                                      const std::vector<std::string>& names, double now) {
  const std::unordered_map<std::string, std::size_t> modal = modal_rail_counts(hosts);
  const double recover_after = seconds_of(config_.recover_after);
  std::vector<std::string> seen;
  for (auto& [name, h] : hosts) {
    std::sort(h.ports.begin(), h.ports.end(), [](const HcaPortHealth& a, const HcaPortHealth& b) {
      return a.device != b.device ? a.device < b.device : a.port < b.port;
    });
    h.rails_expected =
        static_cast<std::uint32_t>(std::max(h.ports.size(), modal.at(host_family(name))));
    for (const HcaPortHealth& p : h.ports) h.rails_active += p.active ? 1 : 0;
    const std::string reason = fault_reason(h, f, names, now);
    const auto spell = spells_.find(name);
    if (!reason.empty()) {
      Spell& s = spells_[name];
      if (s.since == 0) s.since = now;
      s.last_fault = now;
      s.reason = reason;
    } else if (spell != spells_.end() && now - spell->second.last_fault >= recover_after) {
      spells_.erase(spell);
    }
    seen.push_back(name);
  }
  std::sort(seen.begin(), seen.end());
  std::erase_if(spells_, [&](const auto& s) {
    return !std::binary_search(seen.begin(), seen.end(), s.first);
  });
}

// The blast-radius guard: more hosts turned unhealthy within the window
// than a bad cable or two explain. A spine, a leaf or an SM event, and
// draining them would empty the cluster for a fabric fault: their verdict is
// "fabric incident" for as long as their spell lasts. Returns how many hosts
// are in one.
std::size_t NodeHealthTracker::mark_incidents(std::size_t hosts, double now) {
  const double window = seconds_of(config_.incident_window);
  std::size_t recent = 0;
  for (const auto& [name, s] : spells_) recent += now - s.since <= window ? 1 : 0;
  if (recent >= static_cast<std::size_t>(config_.incident_min_hosts) &&
      static_cast<double>(recent) > config_.incident_share * static_cast<double>(hosts)) {
    for (auto& [name, s] : spells_) s.incident = s.incident || now - s.since <= window;
  }
  std::size_t incident_hosts = 0;
  for (const auto& [name, s] : spells_) incident_hosts += s.incident ? 1 : 0;
  return incident_hosts;
}

// Every host into the report, with the verdict its spell gives it.
void NodeHealthTracker::give_verdicts(Hosts& hosts, std::size_t incident_hosts, double now,
                                      NodeHealthReport& report) const {
  const double recover_after = report.recover_after_seconds;
  report.hosts.reserve(hosts.size());
  for (auto& [name, h] : hosts) {
    if (const auto s = spells_.find(name); s != spells_.end()) {
      h.since = s->second.since;
      h.reason = s->second.reason;
      if (s->second.last_fault < now) h.recover_at = s->second.last_fault + recover_after;
      if (s->second.incident) {
        h.verdict = NodeVerdict::kIncident;
        h.reason = std::string(kNodeReasonPrefix) + " fabric incident (" +
                   std::to_string(incident_hosts) +
                   " hosts):" + h.reason.substr(kNodeReasonPrefix.size());
        cap_reason(h.reason);
        ++report.incident;
      } else {
        h.verdict = NodeVerdict::kUnhealthy;
        ++report.unhealthy;
      }
    }
    report.hosts.push_back(std::move(h));
  }
}

}  // namespace ibfx
