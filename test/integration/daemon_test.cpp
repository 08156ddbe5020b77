// The daemon against a simulated rail-optimized fat tree: real libibumad /
// libibmad / libibnetdisc code paths through umad2sim and ibsim.
#include <catch2/catch.hpp>

#include "daemon_fixture.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

namespace {
// Ports the daemon must export: every switch port (all of a switch's ports
// answer PMA through its LID) and every cabled HCA port.
std::size_t expected_ports(const Fabric& f) {
  std::size_t n = 0;
  for (const auto& node : f.nodes()) {
    if (node.is_switch()) {
      n += static_cast<std::size_t>(node.num_ports());
    } else {
      for (const auto& p : node.ports) n += p.connected() ? 1 : 0;
    }
  }
  return n;
}
}  // namespace

TEST_CASE("Daemon exports every port and exact PerformanceSet values", "[daemon][integration]") {
  const Fabric fabric = make_fat_tree(small_fat_tree());
  SimFabric sim(fabric);
  const std::string leaf = "leaf-r1-01";
  const std::string hca = hca_name("gpu0002", 1);
  sim.perf_set(leaf, 5, "PortCounters.PortXmitWait", 987654);
  sim.perf_set(leaf, 5, "PortCounters.SymbolErrorCounter", 17);
  sim.perf_set(leaf, 5, "PortCounters.LinkDownedCounter", 3);
  sim.perf_set(hca, 1, "PortCounters.PortRcvErrors", 42);

  // The raw counts are opt-in; the unit per port (export.port_scores) ties
  // the stall seconds to them.
  Daemon daemon(
      sim,
      {config_flag(sim, ConfigYaml().raw_transmit_wait().set("export.port_scores", "true").str())});
  REQUIRE(daemon.wait_ready());
  Series s = daemon.series();
  const std::string leaf_guid = guid_of(s, leaf);
  const std::string hca_guid = guid_of(s, hca);
  REQUIRE(!leaf_guid.empty());
  REQUIRE(!hca_guid.empty());
  const std::string lp = port_labels(leaf_guid, leaf, "switch", 5);
  CHECK(value(s, "infiniband_port_transmit_wait_total" + lp) == 987654);
  CHECK(value(s, "infiniband_port_symbol_errors_total" + lp) == 17);
  CHECK(value(s, "infiniband_port_link_downed_total" + lp) == 3);
  CHECK(value(s, "infiniband_port_receive_errors_total" + port_labels(hca_guid, hca, "hca", 1)) ==
        42);
  // The sum of the port's error counters is always there.
  CHECK(value(s, "infiniband_port_errors_total" + lp) == 17 + 3);
  const double unit = value(s, "infiniband_port_transmit_wait_unit_seconds" + lp);
  CHECK(unit > 0);
  CHECK(value(s, "infiniband_port_transmit_wait_seconds_total" + lp) ==
        Approx(987654 * unit).epsilon(1e-6));

  CHECK(count_family(s, "infiniband_port_state") == expected_ports(fabric));
  CHECK(count_family(s, "infiniband_port_physical_state") == expected_ports(fabric));
  CHECK(count_family(s, "infiniband_port_info") == expected_ports(fabric));
  CHECK(count_family(s, "infiniband_node_info") == fabric.nodes().size());
  CHECK(count_family(s, "infiniband_exporter_node_up") == fabric.nodes().size());
  CHECK(value(s, "infiniband_exporter_mad_requests_total{result=\"timeout\"}") == 0);

  // Counters move between sweeps and the exporter follows.
  sim.perf_set(leaf, 5, "PortCounters.PortXmitWait", 1000000);
  CHECK(daemon.wait_value("infiniband_port_transmit_wait_total" + lp, 1000000));
}

TEST_CASE("Daemon agrees with perfquery and data counters are bytes", "[daemon][integration]") {
  const Fabric fabric = make_fat_tree(small_fat_tree());
  SimFabric sim(fabric);
  const std::string spine = "spine-01";
  sim.perf_set(spine, 2, "PortCounters.PortXmitWait", 5555);
  sim.perf_set(spine, 2, "PortCounters.VL15Dropped", 9);
  sim.perf_set(spine, 2, "PortCountersExtended.PortXmitData", 1000000000000ull);
  Daemon daemon(sim, {config_flag(sim, kRawWaitYaml)});
  REQUIRE(daemon.wait_ready());
  const Series s = daemon.series();
  const std::string guid = guid_of(s, spine);
  const std::string labels = port_labels(guid, spine, "switch", 2);
  const int lid = sim.lid_of(spine);
  const RunResult pc = sim.run({"perfquery", std::to_string(lid), "2"});
  REQUIRE(pc.ok());
  CHECK(value(s, "infiniband_port_transmit_wait_total" + labels) ==
        static_cast<double>(perfquery_field(pc.out, "PortXmitWait")));
  CHECK(value(s, "infiniband_port_vl15_dropped_total" + labels) ==
        static_cast<double>(perfquery_field(pc.out, "VL15Dropped")));
  const RunResult ext = sim.run({"perfquery", "-x", std::to_string(lid), "2"});
  REQUIRE(ext.ok());
  // ibsim adds the MADs' own traffic to the data counters, so the value read
  // a moment later by perfquery is at least ours; both are words, we export
  // bytes: 4 x words.
  const double bytes = value(s, "infiniband_port_transmit_data_bytes_total" + labels);
  const auto words = perfquery_field(ext.out, "PortXmitData");
  CHECK(bytes >= 4.0 * 1000000000000.0);
  CHECK(bytes <= 4.0 * static_cast<double>(words));
  CHECK(static_cast<std::uint64_t>(bytes) % 4 == 0);
}

TEST_CASE("A down link stays visible and its counters stay", "[daemon][integration]") {
  const Fabric fabric = make_fat_tree(small_fat_tree());
  SimFabric sim(fabric);
  const std::string hca = hca_name("gpu0001", 0);
  sim.perf_set(hca, 1, "PortCounters.SymbolErrorCounter", 11);
  Daemon daemon(sim, {"--sweep.interval=500ms"});
  REQUIRE(daemon.wait_ready());
  Series s = daemon.series();
  const std::string guid = guid_of(s, hca);
  const std::string hp = port_labels(guid, hca, "hca", 1);
  const std::string phys = "infiniband_port_physical_state" + hp;
  REQUIRE(value(s, phys) == kPhysLinkUp);
  sim.unlink(hca, 1);
  // The HCA stops answering, the daemon rediscovers, and the port goes down
  // without its series vanishing or its counter going backwards.
  CHECK(eventually([&] { return value(daemon.series(), phys) != kPhysLinkUp; }));
  s = daemon.series();
  CHECK(value(s, "infiniband_port_symbol_errors_total" + hp) == 11);
  // No port vanished (the HCA is no longer discovered but is kept).
  CHECK(count_family(s, "infiniband_port_physical_state") == expected_ports(fabric));

  sim.relink(hca, 1);
  CHECK(daemon.wait_value(phys, kPhysLinkUp, std::chrono::seconds(40)));
  CHECK(value(daemon.series(), "infiniband_port_symbol_errors_total" + hp) >= 11);
}

TEST_CASE("Serving a promtool-clean exposition with gzip and health endpoints",
          "[daemon][integration]") {
  SimFabric sim(make_fat_tree(small_fat_tree()));
  Daemon daemon(sim);
  CHECK(http_get(daemon.port(), "/-/healthy").status == 200);
  REQUIRE(daemon.wait_ready());
  const HttpReply plain = http_get(daemon.port(), "/metrics");
  CHECK(plain.status == 200);
  CHECK(plain.headers.at("content-type").find("version=0.0.4") != std::string::npos);

  const HttpReply gz = http_get(daemon.port(), "/metrics", {"Accept-Encoding: gzip"});
  CHECK(gz.status == 200);
  CHECK(gz.headers.at("content-encoding") == "gzip");
  CHECK(gz.body.size() < plain.body.size());

  const std::string path = sim.dir() + "/scrape.prom";
  std::ofstream(path) << plain.body;
  const RunResult check = sim.run({"sh", "-c", "promtool check metrics < " + path});
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.err.empty());

  const HttpReply landing = http_get(daemon.port(), "/");
  CHECK(landing.status == 200);
  CHECK(landing.body.find("/metrics") != std::string::npos);
  CHECK(http_get(daemon.port(), "/nope").status == 404);
  CHECK(http_get(daemon.port(), "/metrics", {}, "POST").status == 405);
}

TEST_CASE("A node that drops every MAD costs node_up 0 and never the scrape",
          "[daemon][integration]") {
  const Fabric fabric = make_fat_tree(small_fat_tree());
  SimFabric sim(fabric);
  const std::string hca = hca_name("gpu0003", 0);
  Daemon daemon(sim, {"--sweep.interval=500ms"});
  REQUIRE(daemon.wait_ready());
  const std::string guid = guid_of(daemon.series(), hca);
  sim.error_rate(hca, 1, 100);
  // node_up carries the node's GUID only; its name is on infiniband_node_info.
  const std::string up = "infiniband_exporter_node_up{node_guid=\"" + guid + "\"}";
  CHECK(daemon.wait_value(up, 0));
  const Series s = daemon.series();
  CHECK(value(s, "infiniband_exporter_mad_requests_total{result=\"timeout\"}") > 0);
  // Every other node still answers.
  std::size_t down = 0;
  for (const auto& [key, value] : s) {
    if (key.rfind("infiniband_exporter_node_up{", 0) == 0 && value == 0) ++down;
  }
  CHECK(down == 1);
  sim.error_rate(hca, 1, 0);
  CHECK(daemon.wait_value(up, 1));
}

TEST_CASE("Once mode prints one exposition and exits 0", "[daemon][integration]") {
  SimFabric sim(make_fat_tree(small_fat_tree()));
  sim.perf_set("leaf-r0-01", 1, "PortCounters.PortXmitWait", 77);
  const RunResult r = sim.run({IBFX_DAEMON_PATH, "--once", "--sweep.interval=200ms"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Series s = parse_exposition(r.out);
  const std::string guid = guid_of(s, "leaf-r0-01");
  // By default PortXmitWait is exported as stall seconds only.
  const std::string lp = port_labels(guid, "leaf-r0-01", "switch", 1);
  CHECK(value(s, "infiniband_port_transmit_wait_seconds_total" + lp) > 0);
  CHECK(count_family(s, "infiniband_port_transmit_wait_total") == 0);
  const RunResult raw = sim.run(
      {IBFX_DAEMON_PATH, "--once", "--sweep.interval=200ms", config_flag(sim, kRawWaitYaml)});
  REQUIRE(raw.exit_code == 0);
  CHECK(value(parse_exposition(raw.out), "infiniband_port_transmit_wait_total" + lp) == 77);
  CHECK(value(s, "infiniband_exporter_sweeps_total") == 2);
}
