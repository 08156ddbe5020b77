#include "jobs/job_join.h"

#include <catch2/catch.hpp>

#include "config/config.h"
#include "test/support/fabric_builder.h"
#include "test/support/temp_dir.h"

namespace {

using ibfx::PortSample;
using ibfx::PortScore;

}  // namespace

TEST_CASE("job join: hosts to HCA and leaf ports, stall seconds, roots", "[job_join]") {
  ibfx::test::FabricBuilder b;
  const int leaf = b.add_switch("leaf01");
  const int h0 = b.add_hca("g00000 mlx5_0");
  const int h1 = b.add_hca("g00001 mlx5_0");
  const int h2 = b.add_hca("other-name mlx5_0");
  b.link(leaf, h0);  // leaf port index 0
  b.link(leaf, h1);  // leaf port index 1
  b.link(leaf, h2);  // leaf port index 2
  auto fabric = std::make_shared<const ibfx::Fabric>(b.build());

  // Analysed ports: leaf 0..2, then the three HCA ports.
  std::vector<PortScore> ports;
  std::vector<PortSample> samples;
  auto add = [&](int node, std::uint32_t index, double w) {
    PortScore p;
    p.node = node;
    p.port_index = index;
    p.valid = true;
    p.stall = w;
    ports.push_back(p);
    PortSample s;
    s.node = node;
    s.port_index = index;
    s.interval_seconds = 10;
    samples.push_back(s);
  };
  add(leaf, 0, 0.5);  // 0: root, into g00000's HCA
  add(leaf, 1, 0.0);
  add(leaf, 2, 0.0);
  add(h0, 0, 0.2);  // 3: victim of the root
  add(h1, 0, 0.1);  // 4
  add(h2, 0, 0.0);
  ibfx::CongestionForest forest;
  forest.root.assign(ports.size(), ibfx::kNoPort);
  forest.parent.assign(ports.size(), ibfx::kNoPort);
  forest.root[0] = 0;
  forest.root[3] = 0;
  forest.roots.push_back({0, ibfx::CongestionCause::kIncast, 0.7, 1});

  auto jobs = std::make_shared<std::vector<ibfx::SlurmJob>>();
  jobs->push_back({7, "train \"x\"", "alice", "gpu", {"g00000"}, 0});
  jobs->push_back({8, "other", "bob", "gpu", {"g00001", "nohost", "n9"}, 0});
  ibfx::JobJoinConfig config;
  config.host_map = {{"n9", "other-name"}};
  ibfx::JobJoin join(config);
  CHECK(join.host_of("g00003 mlx5_1") == "g00003");
  CHECK(join.host_of("leaf01").empty());

  ibfx::JobJoinResult r = join.join(fabric, ports, samples, forest, jobs);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].hca_ports == 1);
  CHECK(r.jobs[0].ports == std::vector<std::size_t>{0, 3});
  CHECK(r.jobs[0].transmit_wait_seconds == Approx(7.0));  // (0.5 + 0.2) x 10 s
  CHECK(r.jobs[0].stall_ratio_max == 0.5);
  CHECK(r.jobs[1].hca_ports == 2);  // g00001, and n9 through the host map
  CHECK(r.jobs[1].hosts_unknown == 1);
  CHECK(r.jobs[1].ports == std::vector<std::size_t>{1, 2, 4, 5});
  CHECK(r.unknown_hosts == 1);
  CHECK(r.unknown_host_examples == std::vector<std::string>{"nohost"});
  // The root names job 7 (its HCA port and the leaf port into it), not job 8.
  REQUIRE(r.roots.size() == 1);
  CHECK(r.roots[0].jobs == std::vector<std::pair<std::size_t, std::size_t>>{{0, 2}});

  // The stall sums carry on across sweeps; an ended job is forgotten.
  r = join.join(fabric, ports, samples, forest, jobs);
  CHECK(r.jobs[0].transmit_wait_seconds == Approx(14.0));
  jobs->erase(jobs->begin());
  join.join(fabric, ports, samples, forest, jobs);
  jobs->insert(jobs->begin(), {7, "again", "alice", "gpu", {"g00000"}, 0});
  r = join.join(fabric, ports, samples, forest, jobs);
  CHECK(r.jobs[0].transmit_wait_seconds == Approx(7.0));
  // No job list: nothing.
  CHECK(join.join(fabric, ports, samples, forest, nullptr).jobs.empty());
}

TEST_CASE("job join: host map file and bad regex", "[job_join]") {
  const auto map = ibfx::parse_job_host_map("# c\nn1 host-a\n\n  n2\thost-b  # x\n", "m");
  CHECK(map.size() == 2);
  CHECK(map.at("n2") == "host-b");
  CHECK_THROWS_WITH(ibfx::parse_job_host_map("n1\n", "m"),
                    Catch::StartsWith("m:1: jobs.host_map: expected"));
  CHECK_THROWS_WITH(ibfx::parse_job_host_map("n1 a\nn1 b\n", "m"),
                    "m:2: jobs.host_map: \"n1\" is mapped twice");
  ibfx::JobJoinConfig bad;
  bad.host_regex = "(";
  CHECK_THROWS_AS(ibfx::JobJoin(bad), ibfx::ConfigError);
}

TEST_CASE("job join: the settings of jobs: read the host map file, errors name it", "[job_join]") {
  ibfx::test::TempDir dir;
  ibfx::JobsConfig jobs;
  jobs.host_regex = "^(gpu[0-9]+)";
  CHECK(ibfx::load_job_join_config(jobs) == ibfx::JobJoinConfig{"^(gpu[0-9]+)", {}});
  jobs.host_map = dir.write("hosts", "n1 gpu0001\n");
  CHECK(ibfx::load_job_join_config(jobs).host_map.at("n1") == "gpu0001");
  dir.write("hosts", "n1 gpu0001\nn2\n");
  CHECK_THROWS_WITH(ibfx::load_job_join_config(jobs),
                    Catch::StartsWith(jobs.host_map + ":2: jobs.host_map: expected"));
  jobs.host_map = dir.path() + "/absent";
  CHECK_THROWS_WITH(ibfx::load_job_join_config(jobs),
                    Catch::StartsWith(jobs.host_map + ": cannot read"));
}
