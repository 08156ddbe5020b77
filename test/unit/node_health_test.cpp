#include "nodes/node_health.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/node_health_view.h"
#include "base/slurm_node.h"
#include "test/support/fabric_builder.h"
#include "views/status_nodes.h"

namespace {

using ibfx::HostHealth;
using ibfx::LinkCondition;
using ibfx::NodeVerdict;

// 20 GPU hosts "gpuNN" with two HCAs each (mlx5_0 on leaf0, mlx5_1 on
// leaf1), except gpu05 whose mlx5_1 never came up (not discovered), and
// two storage hosts "storN" with one HCA on leaf0.
struct HealthBench {
  explicit HealthBench(ibfx::NodesConfig nodes = {}, ibfx::JobJoinConfig hosts = {})
      : tracker(std::move(hosts), nodes) {
    ibfx::test::FabricBuilder b;
    leaf0 = b.add_switch("leaf0");
    leaf1 = b.add_switch("leaf1");
    for (int h = 1; h <= 20; ++h) {
      const std::string host = (h < 10 ? "gpu0" : "gpu") + std::to_string(h);
      const int a = b.add_hca(host + " mlx5_0");
      b.link(a, leaf0);
      hca[host + " mlx5_0"] = a;
      if (h == 5) continue;
      const int c = b.add_hca(host + " mlx5_1");
      b.link(c, leaf1);
      hca[host + " mlx5_1"] = c;
    }
    for (const char* host : {"stor1", "stor2"}) {
      const int s = b.add_hca(std::string(host) + " mlx5_0");
      b.link(s, leaf0);
    }
    fabric = std::make_shared<const ibfx::Fabric>(b.build());
    for (const auto& n : fabric->nodes) names.push_back(n.description);
  }
  // A link report of `hca`'s port 1 with `condition` (down: its port too).
  ibfx::LinkReport fault(const std::string& hca_name, LinkCondition c, double since) const {
    const int n = hca.at(hca_name);
    const auto& port = fabric->nodes[static_cast<std::size_t>(n)].ports[0];
    ibfx::LinkReport r;
    r.a = {fabric->nodes[static_cast<std::size_t>(n)].guid, 1, n, 0, true};
    const auto far = static_cast<std::size_t>(port.remote_node);
    r.b = {fabric->nodes[far].guid, port.remote_port, port.remote_node, port.remote_port - 1, true};
    r.condition = c;
    r.conditions = static_cast<std::uint8_t>(1u << static_cast<unsigned>(c));
    r.down = c == LinkCondition::kDown;
    r.since = since;
    return r;
  }
  std::shared_ptr<const ibfx::NodeHealthReport> judge(std::vector<ibfx::LinkReport> links,
                                                      double now) {
    ibfx::LinkHealthReport report;
    report.links = std::move(links);
    return tracker.judge(fabric, report, names, nullptr, now);
  }

  ibfx::NodeHealthTracker tracker;
  int leaf0 = 0, leaf1 = 0;
  std::map<std::string, int> hca;
  std::shared_ptr<const ibfx::Fabric> fabric;
  std::vector<std::string> names;
};

const HostHealth& host(const ibfx::NodeHealthReport& r, const std::string& name) {
  const HostHealth* h = r.find(name);
  REQUIRE(h != nullptr);
  return *h;
}

constexpr double kHealthT0 = 1764900000;  // 2025-12-05T02:00:00Z

}  // namespace

TEST_CASE("Node health: every host with its HCA ports and rails, healthy when nothing is wrong",
          "[nodes]") {
  HealthBench b;
  const auto r = b.judge({}, kHealthT0);
  CHECK(r->hosts.size() == 22);
  const HostHealth& h = host(*r, "gpu01");
  CHECK(h.verdict == NodeVerdict::kHealthy);
  CHECK(h.reason.empty());
  CHECK(h.rails_active == 2);
  CHECK(h.rails_expected == 2);
  REQUIRE(h.ports.size() == 2);
  CHECK(h.ports[0].device == "mlx5_0");
  CHECK(h.ports[1].device == "mlx5_1");
  CHECK(h.ports[0].far_node == b.leaf0);
  CHECK(r->find("gpu99") == nullptr);
  CHECK(r->find("") == nullptr);
}

TEST_CASE("Node health: a host missing a rail its peers have is unhealthy, a storage host is not",
          "[nodes]") {
  HealthBench b;
  const auto r = b.judge({}, kHealthT0);
  const HostHealth& short_one = host(*r, "gpu05");
  CHECK(short_one.verdict == NodeVerdict::kUnhealthy);
  CHECK(short_one.rails_active == 1);
  CHECK(short_one.rails_expected == 2);
  CHECK(short_one.reason == "ibfx: 1 of 2 rails active");
  for (const char* s : {"stor1", "stor2"}) {
    const HostHealth& stor = host(*r, s);
    CHECK(stor.verdict == NodeVerdict::kHealthy);
    CHECK(stor.rails_expected == 1);
  }
  CHECK(r->unhealthy == 1);
  CHECK(ibfx::host_family("gpu0017") == "gpu#");
  CHECK(ibfx::host_family("rack3-node12") == "rack#-node#");
}

TEST_CASE("Node health: a down cable drains its host with the port, the far end and the time",
          "[nodes]") {
  HealthBench b;
  const auto r =
      b.judge({b.fault("gpu03 mlx5_1", LinkCondition::kDown, kHealthT0 - 13 * 60)}, kHealthT0);
  const HostHealth& h = host(*r, "gpu03");
  CHECK(h.verdict == NodeVerdict::kUnhealthy);
  CHECK(h.reason == "ibfx: mlx5_1 down (leaf1 p3) since 01:47Z, 1 of 2 rails active");
  CHECK(h.rails_active == 1);
  CHECK(h.since == kHealthT0);
  CHECK(h.ports[1].condition == LinkCondition::kDown);
  CHECK_FALSE(h.ports[1].active);
  CHECK(host(*r, "gpu04").verdict == NodeVerdict::kHealthy);
  // A BER warning is watched, not drained.
  const auto w =
      b.judge({b.fault("gpu07 mlx5_0", LinkCondition::kBerWarning, kHealthT0)}, kHealthT0 + 10);
  CHECK(host(*w, "gpu07").verdict == NodeVerdict::kHealthy);
  // A cable longer than its peers (link_round_trip) is informational only.
  const auto l =
      b.judge({b.fault("gpu08 mlx5_0", LinkCondition::kLengthOutlier, kHealthT0)}, kHealthT0 + 20);
  CHECK(host(*l, "gpu08").verdict == NodeVerdict::kHealthy);
}

TEST_CASE("Node health: sticky recovery, a host stays unhealthy for recover_after after its fault",
          "[nodes]") {
  ibfx::NodesConfig config;
  config.recover_after = std::chrono::minutes(10);
  HealthBench b(config);
  b.judge({b.fault("gpu02 mlx5_0", LinkCondition::kFlapping, kHealthT0)}, kHealthT0);
  // Cleared at +60 s: still unhealthy, with the last reason, until +660 s.
  auto r = b.judge({}, kHealthT0 + 60);
  CHECK(host(*r, "gpu02").verdict == NodeVerdict::kUnhealthy);
  CHECK(host(*r, "gpu02").reason.starts_with("ibfx: mlx5_0 flapping"));
  CHECK(host(*r, "gpu02").recover_at == kHealthT0 + 600);
  // Flaps again: the spell goes on from its start.
  r = b.judge({b.fault("gpu02 mlx5_0", LinkCondition::kFlapping, kHealthT0)}, kHealthT0 + 300);
  CHECK(host(*r, "gpu02").since == kHealthT0);
  CHECK(host(*r, "gpu02").recover_at == 0);
  r = b.judge({}, kHealthT0 + 310);
  CHECK(host(*r, "gpu02").verdict == NodeVerdict::kUnhealthy);
  r = b.judge({}, kHealthT0 + 899);
  CHECK(host(*r, "gpu02").verdict == NodeVerdict::kUnhealthy);
  r = b.judge({}, kHealthT0 + 900);
  CHECK(host(*r, "gpu02").verdict == NodeVerdict::kHealthy);
  CHECK(host(*r, "gpu02").since == 0);
}

TEST_CASE("Node health: the blast-radius guard calls many hosts at once a fabric incident",
          "[nodes]") {
  ibfx::NodesConfig config;
  config.incident_share = 0.05;
  config.incident_min_hosts = 3;
  config.incident_window = std::chrono::minutes(5);
  HealthBench b(config);
  // gpu02's cable went an hour before: its own fault, drained.
  b.judge({b.fault("gpu02 mlx5_0", LinkCondition::kDown, kHealthT0)}, kHealthT0);
  std::vector<ibfx::LinkReport> leaf1_lost = {
      b.fault("gpu02 mlx5_0", LinkCondition::kDown, kHealthT0)};
  for (int h = 10; h <= 20; ++h) {
    leaf1_lost.push_back(
        b.fault("gpu" + std::to_string(h) + " mlx5_1", LinkCondition::kDown, kHealthT0 + 3600));
  }
  auto r = b.judge(leaf1_lost, kHealthT0 + 3600);
  CHECK(r->incident == 11);
  CHECK(r->unhealthy == 2);  // gpu02 and gpu05 (its missing rail)
  CHECK(host(*r, "gpu02").verdict == NodeVerdict::kUnhealthy);
  const HostHealth& hit = host(*r, "gpu15");
  CHECK(hit.verdict == NodeVerdict::kIncident);
  CHECK(hit.reason.starts_with("ibfx: fabric incident (11 hosts): mlx5_1 down"));
  // Past the window, the leaf still down: still an incident, never drained.
  r = b.judge(leaf1_lost, kHealthT0 + 3600 + 900);
  CHECK(host(*r, "gpu15").verdict == NodeVerdict::kIncident);
  // The leaf back: healthy after recovery, not unhealthy in between.
  r = b.judge({b.fault("gpu02 mlx5_0", LinkCondition::kDown, kHealthT0)}, kHealthT0 + 3600 + 1000);
  CHECK(host(*r, "gpu15").verdict == NodeVerdict::kIncident);
  r = b.judge({b.fault("gpu02 mlx5_0", LinkCondition::kDown, kHealthT0)}, kHealthT0 + 3600 + 1600);
  CHECK(host(*r, "gpu15").verdict == NodeVerdict::kHealthy);
  // One more host alone is no incident.
  r = b.judge({b.fault("gpu03 mlx5_0", LinkCondition::kBerError, kHealthT0)}, kHealthT0 + 9000);
  CHECK(host(*r, "gpu03").verdict == NodeVerdict::kUnhealthy);
}

TEST_CASE("Node health: hostile descriptions never reach a reason as they are", "[nodes]") {
  ibfx::test::FabricBuilder fb;
  const int leaf = fb.add_switch("leaf\"; rm -rf / #`id`$(id)");
  const int h = fb.add_hca("gpu01 mlx5_0'$(reboot)\n");
  fb.link(h, leaf);
  auto fabric = std::make_shared<const ibfx::Fabric>(fb.build());
  ibfx::NodeHealthTracker tracker({}, {});
  ibfx::LinkHealthReport links;
  ibfx::LinkReport r;
  r.a = {fabric->nodes[1].guid, 1, 1, 0, true};
  r.b = {fabric->nodes[0].guid, 1, 0, 0, true};
  r.condition = LinkCondition::kDown;
  r.down = true;
  links.links.push_back(r);
  std::vector<std::string> names = {fabric->nodes[0].description, fabric->nodes[1].description};
  const auto report = tracker.judge(fabric, links, names, nullptr, kHealthT0);
  const HostHealth& host1 = host(*report, "gpu01");
  INFO(host1.reason);
  CHECK(host1.reason.find_first_of("\"'`$;\n#\\") == std::string::npos);
  CHECK(host1.reason.starts_with("ibfx: mlx5_0??"));
  CHECK(host1.reason.find("(leaf??") != std::string::npos);
  CHECK(host1.reason.size() <= ibfx::kNodeReasonMax);
}

TEST_CASE("Node health: hosts are Slurm's names through jobs.host_map", "[nodes]") {
  ibfx::JobJoinConfig hosts;
  hosts.host_map = {{"node-a", "gpu01"}};
  HealthBench b({}, hosts);
  const auto r = b.judge({}, kHealthT0);
  CHECK(r->find("node-a") != nullptr);
  CHECK(r->find("gpu01") == nullptr);
  CHECK(r->find("gpu02") != nullptr);
}

TEST_CASE("Node health view: /nodes/<host> answers, unknown hosts and stale sweeps are unknown",
          "[nodes]") {
  HealthBench b;
  ibfx::Snapshot s;
  s.fabric = b.fabric;
  s.node_names = b.names;
  s.sweep_timestamp_seconds = kHealthT0;
  s.nodes = b.judge({b.fault("gpu03 mlx5_1", LinkCondition::kDown, kHealthT0)}, kHealthT0);
  auto a = ibfx::render_node_health(s, "gpu03", kHealthT0 + 5, false);
  CHECK(a.status == 200);
  CHECK(a.content_type == "application/json");
  CHECK(a.body.find("\"verdict\":\"unhealthy\"") != std::string::npos);
  CHECK(a.body.find("\"remote_node_name\":\"leaf1\"") != std::string::npos);
  a = ibfx::render_node_health(s, "gpu03", kHealthT0 + 5, true);
  CHECK(a.body.starts_with("gpu03 unhealthy rails 1/2 ibfx: mlx5_1 down (leaf1 p3)"));
  a = ibfx::render_node_health(s, "nosuch", kHealthT0 + 5, false);
  CHECK(a.status == 404);
  CHECK(a.body.find("\"verdict\":\"unknown\"") != std::string::npos);
  a = ibfx::render_node_health(s, "gpu03", kHealthT0 + 3600, false);
  CHECK(a.status == 200);
  CHECK(a.body.find("\"verdict\":\"unknown\"") != std::string::npos);
  a = ibfx::render_nodes_health(s, kHealthT0 + 5, false);
  CHECK(a.body.find("\"unhealthy\":2") != std::string::npos);
  CHECK(a.body.find("gpu05") != std::string::npos);
  CHECK(a.body.find("gpu04") == std::string::npos);
  a = ibfx::render_nodes_health(s, kHealthT0 + 5, true);
  CHECK(a.body.find("gpu03 unhealthy") != std::string::npos);
  CHECK(ibfx::valid_node_host("gpu-01.a_b"));
  CHECK_FALSE(ibfx::valid_node_host("gpu01;id"));
  CHECK_FALSE(ibfx::valid_node_host(""));
  CHECK_FALSE(ibfx::valid_node_host(std::string(256, 'a')));
}

TEST_CASE("Unhealthy nodes table: unhealthy hosts first, names escaped, the incident said",
          "[nodes]") {
  ibfx::Snapshot s;
  auto report = std::make_shared<ibfx::NodeHealthReport>();
  HostHealth sick;
  sick.host = "gpu<b>01";
  sick.verdict = NodeVerdict::kUnhealthy;
  sick.reason = "ibfx: mlx5_0 down (leaf p1) since 02:13Z";
  sick.since = kHealthT0;
  sick.rails_active = 1;
  sick.rails_expected = 2;
  HostHealth held = sick;
  held.host = "gpu02";
  held.verdict = NodeVerdict::kIncident;
  HostHealth fine;
  fine.host = "gpu03";
  report->hosts = {held, sick, fine};
  report->unhealthy = 1;
  report->incident = 1;
  s.nodes = report;
  const ibfx::StatusUnhealthyNodes nodes = ibfx::status_unhealthy_nodes(s, 50);
  REQUIRE(nodes.rows.size() == 2);
  CHECK(nodes.rows[0].host == "gpu<b>01");
  CHECK(nodes.rows[1].verdict == "fabric incident");
  CHECK_FALSE(nodes.rows[0].jobs);  // no job source
  std::string html;
  ibfx::append_unhealthy_nodes_html(html, nodes, false);
  CHECK(html.find("<h2>Unhealthy nodes</h2>") != std::string::npos);
  CHECK(html.find("gpu&lt;b&gt;01") != std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("<a href=\"/nodes/gpu02?format=text\">gpu02</a>") != std::string::npos);
  CHECK(html.find("Fabric incident:</strong> 1 hosts") != std::string::npos);
  CHECK(html.find("1 of 2") != std::string::npos);
  html.clear();
  ibfx::append_unhealthy_nodes_html(html, {}, false);
  CHECK(html.find("None:") != std::string::npos);
  html.clear();
  ibfx::append_unhealthy_nodes_html(html, nodes, true);
  CHECK(html.find("Not kept by the history") != std::string::npos);
}
