#include "views/status_links.h"

namespace ibfx {

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
    out.push_back(std::move(h));
  }
  return out;
}

std::string link_trouble_at(const LinkHealthReport& links, std::uint64_t guid, int port) {
  for (const LinkReport& l : links.links) {
    const bool here =
        (l.a.guid == guid && l.a.port == port) || (l.b.guid == guid && l.b.port == port);
    if (!here) continue;
    for (const LinkCondition c : {LinkCondition::kFlapping, LinkCondition::kBerError,
                                  LinkCondition::kLinkErrors, LinkCondition::kBerWarning}) {
      if (l.has(c)) return std::string(link_condition_name(c));
    }
  }
  return "";
}

}  // namespace ibfx
