// The status page's model: switches laid out rail x unit then tiers, the
// worst port of each, roots, hottest ports, degraded links, silent nodes,
// sweep health, from a scored snapshot.
#include "views/status_model.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "test/support/status_support.h"
#include "views/status_json.h"

namespace ibfx {

TEST_CASE("the status model lays switches out rail by unit, then spine and core tiers",
          "[status_model]") {
  const test::StatusFixture fx = test::status_fixture();
  const StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(m.switches.size() == 9);  // 4 leaves, 4 spines, 1 core
  REQUIRE(m.rows.size() == 4);
  CHECK(m.rows[0].label == "rail 0");
  CHECK(m.rows[1].label == "rail 1");
  CHECK(m.rows[2].label == "spine");
  CHECK(m.rows[3].label == "core");
  REQUIRE(m.rows[0].switches.size() == 2);
  CHECK(m.switches[m.rows[0].switches[0]].name == "leaf-r0-0");
  CHECK(m.switches[m.rows[0].switches[0]].unit == 0);
  CHECK(m.switches[m.rows[0].switches[1]].name == "leaf-r0-1");
  CHECK(m.switches[m.rows[0].switches[1]].unit == 1);
  CHECK(m.switches[m.rows[0].switches[1]].rail == 0);
  CHECK(m.rows[2].switches.size() == 4);
  CHECK(m.rows[3].switches.size() == 1);

  // leaf-r0-0: ports 1-2 to hosts (the root at W 0.05), 3-4 to spines (0.03, 0.04).
  const StatusSwitch& leaf = m.switches[m.rows[0].switches[0]];
  CHECK(leaf.valid);
  CHECK(leaf.worst_port == 1);
  CHECK(leaf.stall == Approx(0.05));
  CHECK(leaf.utilization == Approx(0.98));
  // The spines of rail 0 wait on the root's leaf at W 0.5.
  const StatusSwitch& spine = m.switches[m.rows[2].switches[0]];
  CHECK(spine.name == "spine-r0-0");
  CHECK(spine.stall == Approx(0.5));
  CHECK(spine.utilization == Approx(0.2));
}

TEST_CASE("the status model natural-sorts units: leaf-2 before leaf-10", "[status_model]") {
  std::vector<std::pair<int, std::string>> rename;
  test::RailFabric probe = test::rail_fabric(
      {.rails = 1, .leaves_per_rail = 3, .hosts_per_leaf = 1, .spines_per_rail = 1});
  rename.push_back({probe.leaf[0][0], "leaf-10"});
  rename.push_back({probe.leaf[0][1], "leaf-2"});
  rename.push_back({probe.leaf[0][2], "leaf-1"});
  const test::StatusFixture fx = test::status_fixture(
      rename, {.rails = 1, .leaves_per_rail = 3, .hosts_per_leaf = 1, .spines_per_rail = 1});
  const StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(!m.rows.empty());
  REQUIRE(m.rows[0].switches.size() == 3);
  CHECK(m.switches[m.rows[0].switches[0]].name == "leaf-1");
  CHECK(m.switches[m.rows[0].switches[1]].name == "leaf-2");
  CHECK(m.switches[m.rows[0].switches[2]].name == "leaf-10");
}

TEST_CASE("the status model lists roots with far end, hottest ports, silent nodes",
          "[status_model]") {
  const test::StatusFixture fx = test::status_fixture();
  const StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(m.roots.size() == 2);
  CHECK(m.roots[0].name == "leaf-r0-0");
  CHECK(m.roots[0].port == 1);
  CHECK(m.roots[0].cause == "incast");
  CHECK(m.roots[0].score == 2.0);
  CHECK(m.roots[0].victims == 2);
  CHECK(m.roots[0].utilization == Approx(0.98));
  CHECK(m.roots[0].remote.name == "host0 mlx5_0");
  CHECK(m.roots[0].remote.port == 1);
  CHECK(m.roots[0].tier == Tier::kLeaf);
  CHECK_FALSE(m.roots[0].jobs.has_value());
  CHECK(m.roots[1].cause == "unexplained");

  REQUIRE(!m.hottest.empty());
  CHECK(m.hottest.size() <= kStatusHottestRows);
  CHECK(m.hottest[0].stall == Approx(0.5));
  CHECK(m.hottest[0].tier == Tier::kSpine);
  CHECK(m.hottest[0].remote.name == "leaf-r0-0");
  for (std::size_t k = 1; k < m.hottest.size(); ++k) {
    CHECK(m.hottest[k - 1].stall >= m.hottest[k].stall);
  }

  REQUIRE(m.not_answering.size() == 1);
  CHECK(m.not_answering_total == 1);
  CHECK(m.not_answering[0].name == "host1 mlx5_1");
  CHECK(m.not_answering[0].type == "hca");
  // The fixture's snapshot tracks events and has none.
  REQUIRE(m.events.has_value());
  CHECK(m.events->empty());
}

TEST_CASE("the status model says so when the snapshot tracks no events", "[status_model]") {
  test::StatusFixture fx = test::status_fixture();
  fx.snapshot->events = nullptr;
  CHECK_FALSE(build_status_model(*fx.snapshot).events.has_value());
}

TEST_CASE("the status model lists a link narrower than its peers once, and a down one",
          "[status_model]") {
  test::StatusFixture fx = test::status_fixture();
  StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(m.degraded_links.size() == 1);
  CHECK(m.degraded_total == 1);
  const StatusLink& l = m.degraded_links[0];
  CHECK_FALSE(l.down);
  CHECK(l.width == "1x");
  CHECK(l.speed == "HDR");
  CHECK(l.rate_gbps == Approx(50));
  CHECK(l.peers_rate_gbps == Approx(200));
  // Listed once, from the end with the smaller (GUID, port); the other is its far end.
  CHECK(((l.name == "leaf-r1-1" && l.remote.name.rfind("spine-r1-", 0) == 0) ||
         (l.remote.name == "leaf-r1-1" && l.name.rfind("spine-r1-", 0) == 0)));

  // A cabled port that went down shows as down.
  auto fabric = std::make_shared<Fabric>(*fx.snapshot->fabric);
  FabricPort& p = fabric->nodes[static_cast<std::size_t>(fx.rail.leaf[0][1])].ports[0];
  p.state = 1;
  p.phys_state = 4;  // PortConfigurationTraining: a cable that does not come up
  fx.snapshot->fabric = fabric;
  m = build_status_model(*fx.snapshot);
  REQUIRE(m.degraded_total == 2);
  bool down = false;
  for (const StatusLink& d : m.degraded_links) down = down || d.down;
  CHECK(down);
}

TEST_CASE("the status model names the Slurm jobs in each root's tree", "[status_model]") {
  test::StatusFixture fx = test::status_fixture();
  CHECK_FALSE(build_status_model(*fx.snapshot).roots[0].jobs.has_value());
  fx.snapshot->jobs.enabled = true;
  JobPorts job;
  job.job_id = 4242;
  job.name = "train<1>";
  job.user = "alice";
  fx.snapshot->jobs.join.jobs.push_back(job);
  fx.snapshot->jobs.join.roots.push_back({0, {{0, 3}}});
  const StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(m.roots[0].jobs.has_value());
  CHECK(*m.roots[0].jobs == std::vector<std::string>{"4242 train<1> (alice)"});
  REQUIRE(m.roots[1].jobs.has_value());
  CHECK(m.roots[1].jobs->empty());
}

TEST_CASE("the status model names the Slurm jobs at either end of each unhealthy link",
          "[status_model]") {
  test::StatusFixture fx = test::status_fixture();
  fx.snapshot->links = test::unhealthy_links(fx);
  CHECK_FALSE(build_status_model(*fx.snapshot).links[1].jobs.has_value());
  // Job 4242 has the HCA port of the BER cable (its leaf end is the other
  // end of the same cable); job 4243 has none of the links' ports.
  const int hca = fx.rail.hca[0][0];
  const auto& ports = fx.snapshot->analysis.result.ports;
  std::size_t hca_port = ports.size();
  for (std::size_t p = 0; p < ports.size(); ++p) {
    if (ports[p].node == hca && ports[p].port_index == 0) hca_port = p;
  }
  REQUIRE(hca_port < ports.size());
  fx.snapshot->jobs.enabled = true;
  JobPorts job;
  job.job_id = 4242;
  job.name = "train";
  job.user = "alice";
  job.ports = {hca_port};
  JobPorts other = job;
  other.job_id = 4243;
  other.ports = {};
  fx.snapshot->jobs.join.jobs = {job, other};
  const StatusModel m = build_status_model(*fx.snapshot);
  REQUIRE(m.links.size() == 2);
  REQUIRE(m.links[1].condition == "ber_error");
  REQUIRE(m.links[1].jobs.has_value());
  CHECK(*m.links[1].jobs == std::vector<std::string>{"4242 train (alice)"});
  REQUIRE(m.links[0].jobs.has_value());
  CHECK(m.links[0].jobs->empty());
  // /status.json says the same; null without a job source.
  const auto j = nlohmann::json::parse(render_status_json(m));
  CHECK(j["links"][1]["jobs"] == nlohmann::json::array({"4242 train (alice)"}));
  fx.snapshot->jobs.enabled = false;
  CHECK(nlohmann::json::parse(
            render_status_json(build_status_model(*fx.snapshot)))["links"][1]["jobs"]
            .is_null());
}

TEST_CASE("the status model's sweep health: time, duration, nodes answering, own port",
          "[status_model]") {
  const test::StatusFixture fx = test::status_fixture();
  const StatusModel m = build_status_model(*fx.snapshot);
  CHECK(m.sweep.timestamp_seconds == 1790000000.5);
  CHECK(m.sweep.duration_seconds == 0.25);
  CHECK(m.sweep.interval_seconds == 10);
  CHECK(m.sweep.scored);
  CHECK(m.sweep.nodes == fx.snapshot->fabric->nodes.size());
  CHECK(m.sweep.nodes_swept == m.sweep.nodes);
  CHECK(m.sweep.nodes_answering == m.sweep.nodes - 1);
  CHECK(m.sweep.local_name == "host0 mlx5_1");
  CHECK(m.sweep.local_port_state == "port 1 Active 4x HDR");
  CHECK(m.refresh_seconds == 10);
}

TEST_CASE("the status model of a snapshot without a fabric is empty", "[status_model]") {
  SweepResult sweep;
  CounterAccumulator acc;
  const auto snap = test::make_snapshot(nullptr, sweep, acc, {});
  const StatusModel m = build_status_model(*snap);
  CHECK(m.switches.empty());
  CHECK(m.rows.empty());
  CHECK(m.roots.empty());
  CHECK_FALSE(m.sweep.scored);
}

TEST_CASE("the status model makes untrusted names valid UTF-8", "[status_model]") {
  test::RailFabric probe = test::rail_fabric({});
  const test::StatusFixture fx = test::status_fixture({{probe.leaf[0][0], "bad\xFF\xC0name"}});
  const StatusModel m = build_status_model(*fx.snapshot);
  CHECK(m.roots[0].name == "bad\xEF\xBF\xBD\xEF\xBF\xBDname");
}

}  // namespace ibfx
