// A scored snapshot of a small rail-optimized fat tree for the status page's
// tests, fuzzer and benchmark: classified by the production topology code,
// W and U set per port as a sweep's analysis would have them, one root of
// congestion with its far end, one node not answering, one link trained
// narrower than its peers.
#pragma once

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/topology.h"
#include "snapshot/snapshot.h"
#include "test/support/fabric_builder.h"
#include "test/support/snapshot_support.h"
#include "views/status_model.h"

namespace ibfx::test {

struct StatusFixture {
  RailFabric rail;
  std::shared_ptr<Snapshot> snapshot;
  int root_leaf = -1;          // leaf-r0-0: the root's node
  std::uint8_t root_port = 0;  // its port towards host0 mlx5_0
  int silent_hca = -1;         // host1's last HCA (mlx5_1): swept, not answering
  int narrow_leaf = -1;        // the last leaf (leaf-r1-1): its first uplink trained 1x
};

// `rename`: node index -> description to use instead (hostile names);
// indices beyond the fabric are ignored.
inline StatusFixture status_fixture(
    const std::vector<std::pair<int, std::string>>& rename = {},
    RailFabricShape shape = {
        .rails = 2, .leaves_per_rail = 2, .hosts_per_leaf = 2, .spines_per_rail = 2, .cores = 1}) {
  StatusFixture fx;
  fx.rail = rail_fabric(shape);
  ibfx::Fabric& f = fx.rail.fabric;
  for (const auto& [n, name] : rename) {
    if (n >= 0 && static_cast<std::size_t>(n) < f.nodes.size()) {
      f.nodes[static_cast<std::size_t>(n)].description = name;
    }
  }
  fx.root_leaf = fx.rail.leaf[0][0];
  fx.root_port = 1;  // the first link of leaf-r0-0: to host0 mlx5_0
  fx.silent_hca = fx.rail.hca[std::min<std::size_t>(1, fx.rail.hca.size() - 1)].back();
  fx.narrow_leaf = fx.rail.leaf.back().back();
  // leaf-r1-1's first uplink (after its hosts' ports) trained at 1x, both ends.
  {
    ibfx::FabricNode& leaf = f.nodes[static_cast<std::size_t>(fx.narrow_leaf)];
    ibfx::FabricPort& up = leaf.ports[static_cast<std::size_t>(shape.hosts_per_leaf)];
    up.width_active = 1;
    ibfx::FabricNode& spine = f.nodes[static_cast<std::size_t>(up.remote_node)];
    for (ibfx::FabricPort& p : spine.ports) {
      if (p.remote_node == fx.narrow_leaf && p.remote_port == up.number) p.width_active = 1;
    }
  }
  f.local_node = f.nodes[static_cast<std::size_t>(fx.rail.hca[0].back())].guid;
  auto fabric = std::make_shared<const ibfx::Fabric>(f);
  CounterAccumulator acc;
  SweepResult sweep;
  sweep.nodes.resize(f.nodes.size(), NodeSweep{.swept = true, .reached = true, .answered = true});
  sweep.nodes[static_cast<std::size_t>(fx.silent_hca)].answered = false;
  sweep.duration_seconds = 0.25;
  sweep.ports_read = f.port_count() - 1;
  SnapshotInputs in;
  in.sweep = &sweep;
  in.accumulator = &acc;
  in.node_names = node_display_names(*fabric, {});
  in.fabric = fabric;
  in.sweep_timestamp_seconds = 1790000000.5;
  auto topology = std::make_shared<const Topology>(classify_topology(*fabric, in.node_names, {}));
  in.analysis.topology = topology;
  in.analysis.interval_seconds = 10;
  auto snap = std::make_shared<Snapshot>(*build_snapshot(std::move(in)));
  // W and U of every switch port: 0.01 x (port number), the root's port 0.9
  // and the spine ports into the root's leaf 0.5 (its victims).
  AnalysisResult& a = snap->analysis.result;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    for (std::uint32_t i = 0; i < f.nodes[n].ports.size(); ++i) {
      const ibfx::FabricPort& fp = f.nodes[n].ports[i];
      PortScore ps;
      ps.node = static_cast<std::int32_t>(n);
      ps.port_index = i;
      ps.tier = topology->tier[n];
      ps.rail = topology->rail[n];
      ps.direction = topology->direction[n][i];
      ps.valid = true;
      ps.stall = 0.01 * fp.number;
      ps.utilization_valid = true;
      ps.utilization = 0.2;
      if (static_cast<int>(n) == fx.root_leaf && fp.number == fx.root_port) {
        ps.stall = 0.05;
        ps.utilization = 0.98;
      } else if (fp.remote_node == fx.root_leaf && topology->tier[n] == Tier::kSpine) {
        ps.stall = 0.5;
      }
      a.ports.push_back(ps);
    }
  }
  std::size_t root_index = 0;
  for (std::size_t k = 0; k < a.ports.size(); ++k) {
    if (a.ports[k].node == fx.root_leaf &&
        f.nodes[static_cast<std::size_t>(fx.root_leaf)].ports[a.ports[k].port_index].number ==
            fx.root_port) {
      root_index = k;
    }
  }
  a.congestion.roots.push_back({root_index, CongestionCause::kIncast, 2.0, 2});
  // A lesser second root: the root leaf's next port, unexplained.
  a.congestion.roots.push_back({root_index + 1, CongestionCause::kUnexplained, 0.4, 0});
  fx.snapshot = snap;
  return fx;
}

}  // namespace ibfx::test

namespace ibfx::test {

// The first tag of `html` that the status page's renderers do not write
// ("" when there is none): a name that escaped its escaping shows up here
// as a tag of its own (<script>, <img>...) or as a '<' not opening a tag.
inline std::string unexpected_tag(std::string_view html) {
  static const std::vector<std::string_view> kTags{
      "!DOCTYPE", "html",  "head", "meta", "link", "title", "noscript", "style", "body",  "nav",
      "a",        "h1",    "h2",   "p",    "svg",  "rect",  "text",     "path",  "g",     "table",
      "thead",    "tbody", "tr",   "th",   "td",   "span",  "strong",   "br",    "script"};
  std::size_t scripts = 0;
  for (std::size_t at = html.find('<'); at != std::string_view::npos; at = html.find('<', at + 1)) {
    std::size_t p = at + 1;
    if (p < html.size() && html[p] == '/') ++p;
    std::size_t end = p;
    while (end < html.size() &&
           (std::isalnum(static_cast<unsigned char>(html[end])) || html[end] == '!')) {
      ++end;
    }
    const std::string_view name = html.substr(p, end - p);
    const bool known = std::find(kTags.begin(), kTags.end(), name) != kTags.end();
    if (!known || end >= html.size() ||
        (html[end] != '>' && html[end] != ' ' && html[end] != '/')) {
      return std::string(html.substr(at, std::min<std::size_t>(20, html.size() - at)));
    }
    if (name == "script" && html[at + 1] != '/' && ++scripts > 1) return "a second <script>";
  }
  return "";
}

// An active event of the page's model: id 7, an incast at leaf-r0-0 port
// 1, 42 s long, peak score 2.5 with 12 victims, jobs 4242 and 4243.
inline StatusEvent active_status_event() {
  StatusEvent event;
  event.id = 7;
  event.state = "active";
  event.name = "leaf-r0-0";
  event.port = 1;
  event.cause = "incast";
  event.start = 1790000000;
  event.duration_seconds = 42;
  event.peak_score = 2.5;
  event.peak_victims = 12;
  event.jobs = {"4242", "4243"};
  return event;
}

// Two unhealthy cables for status_fixture()'s snapshot (issue #34): symbol
// errors at host0 mlx5_0's receiver (leaf-r0-0 port 1 -> host0), a BER
// error; and leaf-r0-1's first port down, its far end (GUID 0xdead) no
// longer in the fabric.
inline std::shared_ptr<const LinkHealthReport> unhealthy_links(const StatusFixture& fx) {
  auto r = std::make_shared<LinkHealthReport>();
  const ibfx::Fabric& f = fx.rail.fabric;
  const int hca = fx.rail.hca[0][0];
  const int leaf = fx.root_leaf;
  const int other_leaf = fx.rail.leaf[0].back();
  LinkReport ber;
  ber.a = {f.nodes[static_cast<std::size_t>(leaf)].guid, 1, leaf, 0, true};
  ber.b = {f.nodes[static_cast<std::size_t>(hca)].guid, 1, hca, 0, true};
  ber.into_b = {LinkCondition::kBerError, 3e-11, false, {.symbol = 500}};
  ber.into_a = {LinkCondition::kNone, 2e-15, false, {.symbol = 1}};
  ber.condition = LinkCondition::kBerError;
  ber.conditions = 1u << static_cast<unsigned>(LinkCondition::kBerError);
  ber.since = 1790000000;
  LinkReport down;
  down.a = {0xdead, 1, kNoNode, -1, false};
  down.b = {f.nodes[static_cast<std::size_t>(other_leaf)].guid, 1, other_leaf, 0, true};
  down.condition = LinkCondition::kDown;
  down.conditions = (1u << static_cast<unsigned>(LinkCondition::kDown)) |
                    (1u << static_cast<unsigned>(LinkCondition::kFlapping));
  down.down = true;
  down.downs_last_hour = 3;
  down.since = 1789999000;
  r->links = {down, ber};
  r->port_ber = {{hca, 0, 3e-11, false}, {leaf, 0, 2e-15, false}};
  r->events_total[static_cast<std::size_t>(LinkCondition::kBerError)] = 1;
  r->events_total[static_cast<std::size_t>(LinkCondition::kDown)] = 1;
  return r;
}

// unhealthy_links() and, after them, a length outlier (issue #41): the first
// leaf's last cable, round trip 180 ns against its peers' 95 ns, no other
// condition.
inline std::shared_ptr<const LinkHealthReport> length_outlier_links(const StatusFixture& fx) {
  auto links = std::make_shared<LinkHealthReport>(*unhealthy_links(fx));
  const ibfx::Fabric& f = fx.rail.fabric;
  const int leaf = fx.rail.leaf[0][0];
  // The leaf's last cable (an uplink).
  const auto& ports = f.nodes[static_cast<std::size_t>(leaf)].ports;
  std::size_t i = ports.size() - 1;
  while (i > 0 && !ports[i].linked()) --i;
  const ibfx::FabricPort& p = ports[i];
  const auto far = static_cast<std::size_t>(p.remote_node);
  LinkReport longer;
  longer.a = {f.nodes[static_cast<std::size_t>(leaf)].guid, p.number, leaf,
              static_cast<std::int32_t>(i), true};
  longer.b = {f.nodes[far].guid, p.remote_port, static_cast<std::int32_t>(far), 0, true};
  longer.condition = LinkCondition::kLengthOutlier;
  longer.conditions = 1u << static_cast<unsigned>(LinkCondition::kLengthOutlier);
  longer.round_trip_ns = 180;
  longer.peers_round_trip_ns = 95;
  links->links.push_back(longer);
  return links;
}

}  // namespace ibfx::test
