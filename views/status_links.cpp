#include "views/status_links.h"

#include <algorithm>
#include <unordered_map>

#include "links/link_peers.h"
#include "views/web_escape.h"

namespace ibfx {

std::string link_degraded_reason(const Fabric& fabric, const LinkReport& l) {
  // The width and speed of an end the fabric still has (both trained alike).
  std::string width, speed;
  for (const LinkEnd* e : {&l.a, &l.b}) {
    if (e->node == kNoNode || e->port_index < 0 ||
        static_cast<std::size_t>(e->node) >= fabric.nodes.size()) {
      continue;
    }
    const auto& ports = fabric.nodes[static_cast<std::size_t>(e->node)].ports;
    if (static_cast<std::size_t>(e->port_index) >= ports.size()) continue;
    const FabricPort& p = ports[static_cast<std::size_t>(e->port_index)];
    width = std::string(link_width_name(p.width_active));
    speed = std::string(link_speed_name(p));
    break;
  }
  return degraded_reason(l.below_enabled, std::string(link_width_name(l.enabled.width_active)),
                         std::string(link_speed_name(l.enabled)), l.below_peers, l.rate_gbps,
                         l.peers_rate_gbps, width, speed);
}

std::string job_label(const JobPorts& j) {
  return valid_utf8(std::to_string(j.job_id) + " " + j.name + " (" + j.user + ")");
}

namespace {

// The jobs with a port at either end of each listed link: the job join's
// ports (a job's HCA ports and the leaf ports cabled to them) by fabric
// port, looked up for the links' ends only.
void add_link_jobs(const Snapshot& s, std::vector<StatusLinkHealth>& links) {
  if (!s.jobs.enabled) return;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>>
      wanted;  // (node << 8 | port) -> links
  auto key = [](std::int32_t node, int port) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(node)) << 8 |
           static_cast<std::uint8_t>(port);
  };
  for (std::size_t i = 0; i < links.size(); ++i) {
    links[i].jobs.emplace();
    for (const StatusLinkEnd* e : {&links[i].node, &links[i].remote}) {
      if (e->node != kNoNode) wanted[key(e->node, e->port)].push_back(i);
    }
  }
  const auto& ports = s.analysis.result.ports;
  for (const JobPorts& j : s.jobs.join.jobs) {
    std::vector<std::size_t> hit;
    for (const std::size_t p : j.ports) {
      if (p >= ports.size() || ports[p].node < 0 || !s.fabric) continue;
      const auto n = static_cast<std::size_t>(ports[p].node);
      if (n >= s.fabric->nodes.size() || ports[p].port_index >= s.fabric->nodes[n].ports.size()) {
        continue;
      }
      const auto it =
          wanted.find(key(ports[p].node, s.fabric->nodes[n].ports[ports[p].port_index].number));
      if (it != wanted.end()) hit.insert(hit.end(), it->second.begin(), it->second.end());
    }
    std::sort(hit.begin(), hit.end());
    hit.erase(std::unique(hit.begin(), hit.end()), hit.end());
    for (const std::size_t i : hit) links[i].jobs->push_back(job_label(j));
  }
}

}  // namespace

std::vector<StatusLinkHealth> status_links(const Snapshot& s,
                                           const std::vector<std::string>& clean_names,
                                           std::size_t max_rows) {
  std::vector<StatusLinkHealth> out;
  auto end_of = [&](const LinkEnd& e) {
    StatusLinkEnd x;
    x.guid = e.guid;
    x.port = e.port;
    x.read = e.read;
    x.node = e.node;
    if (e.node != kNoNode && static_cast<std::size_t>(e.node) < clean_names.size()) {
      x.name = clean_names[static_cast<std::size_t>(e.node)];
    }
    return x;
  };
  auto ber = [](const LinkDirectionReport& d) {
    return d.symbol_ber >= 0 ? std::optional<double>(d.symbol_ber) : std::nullopt;
  };
  for (const LinkReport& l : s.links->links) {
    if (out.size() >= max_rows) break;
    const bool b_first = l.b_receives_worse();
    StatusLinkHealth h;
    h.node = end_of(b_first ? l.b : l.a);
    h.remote = end_of(b_first ? l.a : l.b);
    const LinkDirectionReport& into_node = b_first ? l.into_b : l.into_a;
    const LinkDirectionReport& into_remote = b_first ? l.into_a : l.into_b;
    h.condition = std::string(link_condition_name(l.condition));
    for (std::size_t c = kLinkConditionCount; c-- > 1;) {
      if (l.has(static_cast<LinkCondition>(c))) {
        h.conditions.emplace_back(link_condition_name(static_cast<LinkCondition>(c)));
      }
    }
    h.symbol_ber = ber(into_node);
    h.symbol_ber_at_least = into_node.at_least;
    h.remote_symbol_ber = ber(into_remote);
    h.downs_last_hour = l.downs_last_hour;
    h.since = l.since;
    const LinkEnd& e = b_first ? l.b : l.a;
    if (s.fabric && e.node != kNoNode && e.port_index >= 0) {
      const FabricPort& p = s.fabric->nodes[static_cast<std::size_t>(e.node)]
                                .ports[static_cast<std::size_t>(e.port_index)];
      if (p.up()) {
        h.width = std::string(link_width_name(p.width_active));
        h.speed = std::string(link_speed_name(p));
      }
    }
    h.rate_gbps = l.rate_gbps;
    h.peers_rate_gbps = l.peers_rate_gbps;
    if (l.has(LinkCondition::kDegraded)) h.degraded_reason = link_degraded_reason(*s.fabric, l);
    if (l.has(LinkCondition::kLengthOutlier)) h.length_reason = link_length_reason(l);
    out.push_back(std::move(h));
  }
  add_link_jobs(s, out);
  return out;
}

std::string link_length_reason(const LinkReport& link) {
  return "round trip " + std::to_string(link.round_trip_ns) + " ns, its peers' " +
         std::to_string(link.peers_round_trip_ns) + " ns";
}

std::string link_trouble_at(const LinkHealthReport& links, std::uint64_t guid, int port) {
  for (const LinkReport& l : links.links) {
    const bool here =
        (l.a.guid == guid && l.a.port == port) || (l.b.guid == guid && l.b.port == port);
    if (here) return std::string(link_condition_name(l.condition));
  }
  return "";
}

}  // namespace ibfx
