// The opt-in counter groups (counters.error_details, vl_transmit_wait,
// congestion_control) against ibsim, whose PMA answers PortRcvErrorDetails,
// PortXmitDiscardDetails and PortVLXmitWaitCounters (and not the congestion
// control attributes): values set through the simulator's console, the
// daemon's exposition compared with perfquery -E, -D and --vlxmitcounters.
#include <catch2/catch.hpp>
#include <fstream>
#include <span>

#include "daemon_fixture.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

namespace {
const FatTreeSpec kTree = small_fat_tree();

std::string groups_config(SimFabric& sim, bool on) {
  const std::string path = sim.dir() + "/groups.yaml";
  const std::string v = on ? "true" : "false";
  return ConfigYaml()
      .set("counters.error_details", v)
      .set("counters.vl_transmit_wait", v)
      .set("counters.congestion_control", v)
      .write(path);
}

// The value of the series of `family` with the port's labels and a
// trailing `lane_label`="lane"; throws if absent.
double lane_value(const Series& s, const std::string& family, const std::string& port_prefix,
                  const std::string& lane_label, int lane) {
  const std::string prefix = family + port_prefix;
  const std::string tail = "," + lane_label + "=\"" + std::to_string(lane) + "\"}";
  for (auto it = s.lower_bound(prefix); it != s.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    if (it->first.size() > tail.size() &&
        it->first.compare(it->first.size() - tail.size(), tail.size(), tail) == 0) {
      return it->second;
    }
  }
  throw std::out_of_range("no series " + prefix + "..." + tail);
}

struct Field {
  const char* attribute;  // ibsim console attribute
  const char* console;    // ibsim console field
  const char* perfquery;  // libibmad's dump name
  const char* metric;
  std::uint64_t value;
};
// ibsim's console names (sim_cmd.c do_perf_counter_set) and libibmad's
// dump names differ for one field: PortMalformedPacketErrors / ...PktErrors.
const Field kRcvDetails[] = {
    {"PortRcvErrorDetails", "PortLocalPhysicalErrors", "PortLocalPhysicalErrors",
     "infiniband_port_local_physical_errors_total", 101},
    {"PortRcvErrorDetails", "PortMalformedPacketErrors", "PortMalformedPktErrors",
     "infiniband_port_malformed_packet_errors_total", 102},
    {"PortRcvErrorDetails", "PortBufferOverrunErrors", "PortBufferOverrunErrors",
     "infiniband_port_buffer_overrun_errors_total", 103},
    {"PortRcvErrorDetails", "PortDLIDMappingErrors", "PortDLIDMappingErrors",
     "infiniband_port_dlid_mapping_errors_total", 104},
    {"PortRcvErrorDetails", "PortVLMappingErrors", "PortVLMappingErrors",
     "infiniband_port_vl_mapping_errors_total", 105},
    {"PortRcvErrorDetails", "PortLoopingErrors", "PortLoopingErrors",
     "infiniband_port_looping_errors_total", 106},
};
const Field kXmitDetails[] = {
    {"PortXmitDiscardDetails", "PortInactiveDiscards", "PortInactiveDiscards",
     "infiniband_port_inactive_discards_total", 201},
    {"PortXmitDiscardDetails", "PortNeighborMTUDiscards", "PortNeighborMTUDiscards",
     "infiniband_port_neighbor_mtu_discards_total", 202},
    {"PortXmitDiscardDetails", "PortSwLifetimeLimitDiscards", "PortSwLifetimeLimitDiscards",
     "infiniband_port_sw_lifetime_limit_discards_total", 203},
    {"PortXmitDiscardDetails", "PortSwHOQLifetimeLimitDiscards", "PortSwHOQLifetimeLimitDiscards",
     "infiniband_port_sw_hoq_lifetime_limit_discards_total", 204},
};
}  // namespace

TEST_CASE("Counter groups agree with perfquery -E -D and --vlxmitcounters exactly",
          "[counter_groups][integration]") {
  const Fabric fabric = make_fat_tree(kTree);
  SimFabric sim(fabric);
  const std::string leaf = "leaf-r0-01";
  const std::string hca = hca_name("gpu0003", 1);
  struct Target {
    std::string name;
    int port;
    std::uint64_t offset;  // distinct values per port
  };
  const Target targets[] = {{leaf, 3, 0}, {hca, 1, 1000}};
  for (const Target& t : targets) {
    for (const Field& f : kRcvDetails) {
      sim.perf_set(t.name, t.port, std::string(f.attribute) + "." + f.console, f.value + t.offset);
    }
    for (const Field& f : kXmitDetails) {
      sim.perf_set(t.name, t.port, std::string(f.attribute) + "." + f.console, f.value + t.offset);
    }
  }
  // VLs 0, 3 and 15 stalled on the leaf port; the others never.
  sim.perf_set(leaf, 3, "PortVLXmitWaitCounters.PortVLXmitWaitCounters0", 4000);
  sim.perf_set(leaf, 3, "PortVLXmitWaitCounters.PortVLXmitWaitCounters3", 333);
  sim.perf_set(leaf, 3, "PortVLXmitWaitCounters.PortVLXmitWaitCounters15", 65535);

  Daemon daemon(sim, {"--config.file=" + groups_config(sim, true)});
  REQUIRE(daemon.wait_ready());
  // The first sweep probes each attribute once; the next reads them.
  Series s = daemon.series();
  const std::string leaf_guid = guid_of(s, leaf);
  const std::string hca_guid = guid_of(s, hca);
  REQUIRE(!leaf_guid.empty());
  REQUIRE(!hca_guid.empty());
  const std::string lp = port_labels(leaf_guid, leaf, "switch", 3);
  const std::string hp = port_labels(hca_guid, hca, "hca", 1);
  REQUIRE(daemon.wait_value("infiniband_port_looping_errors_total" + lp, 106));
  REQUIRE(daemon.wait_value("infiniband_port_sw_hoq_lifetime_limit_discards_total" + hp, 1204));
  REQUIRE(eventually([&] {
    try {
      return lane_value(daemon.series(), "infiniband_port_vl_transmit_wait_total", lp, "vl", 3) ==
             333;
    } catch (const std::out_of_range&) {
      return false;
    }
  }));
  s = daemon.series();

  for (const Target& t : targets) {
    const int lid = sim.lid_of(t.name);
    const std::string labels = t.name == leaf ? lp : hp;
    const std::pair<const char*, std::span<const Field>> options[] = {{"-E", kRcvDetails},
                                                                      {"-D", kXmitDetails}};
    for (const auto& [option, fields] : options) {
      const RunResult pq =
          sim.run({"perfquery", option, std::to_string(lid), std::to_string(t.port)});
      REQUIRE(pq.ok());
      for (const Field& f : fields) {
        INFO(t.name << " " << option << " " << f.perfquery);
        CHECK(perfquery_field(pq.out, f.perfquery) == f.value + t.offset);
        CHECK(value(s, f.metric + labels) ==
              static_cast<double>(perfquery_field(pq.out, f.perfquery)));
      }
    }
  }

  const RunResult vl =
      sim.run({"perfquery", "--vlxmitcounters", std::to_string(sim.lid_of(leaf)), "3"});
  REQUIRE(vl.ok());
  std::size_t exported = 0;
  for (int lane = 0; lane < 16; ++lane) {
    INFO("VL " << lane);
    const std::uint64_t pq = perfquery_field(vl.out, "PortVLXmitWait" + std::to_string(lane));
    if (pq == 0) {
      // A VL that never stalled has no series (the cardinality control).
      CHECK_THROWS_AS(lane_value(s, "infiniband_port_vl_transmit_wait_total", lp, "vl", lane),
                      std::out_of_range);
      continue;
    }
    ++exported;
    CHECK(lane_value(s, "infiniband_port_vl_transmit_wait_total", lp, "vl", lane) ==
          static_cast<double>(pq));
    CHECK(lane_value(s, "infiniband_port_vl_transmit_wait_seconds_total", lp, "vl", lane) > 0);
  }
  CHECK(exported == 3);
  CHECK(count_family(s, "infiniband_port_vl_transmit_wait_total") == 3);

  // ibsim implements no congestion-control attribute: probed once, nothing
  // exported, and the nodes stay up.
  CHECK(count_family(s, "infiniband_port_receive_fecn_packets_total") == 0);
  CHECK(count_family(s, "infiniband_port_sl_receive_fecn_packets_total") == 0);
  for (const auto& [key, v] : s) {
    if (key.rfind("infiniband_exporter_node_up{", 0) == 0) CHECK(v == 1);
  }

  // The counters move between sweeps and the daemon follows.
  sim.perf_set(leaf, 3, "PortRcvErrorDetails.PortLoopingErrors", 500);
  CHECK(daemon.wait_value("infiniband_port_looping_errors_total" + lp, 500));
}

TEST_CASE("Counter groups off: no series and no extra MAD per sweep",
          "[counter_groups][integration]") {
  const Fabric fabric = make_fat_tree(kTree);
  SimFabric sim(fabric);
  sim.perf_set("leaf-r0-01", 3, "PortRcvErrorDetails.PortLoopingErrors", 7);
  sim.perf_set("leaf-r0-01", 3, "PortVLXmitWaitCounters.PortVLXmitWaitCounters2", 9);
  Daemon daemon(sim, {"--config.file=" + groups_config(sim, false)});
  REQUIRE(daemon.wait_ready());
  // MADs answered and sweeps run, from one scrape (one instant).
  const auto totals = [&] {
    const Series s = daemon.series();
    return std::pair{value(s, "infiniband_exporter_mad_requests_total{result=\"ok\"}"),
                     value(s, "infiniband_exporter_sweeps_total")};
  };
  // After the first sweep (ClassPortInfo, PortSamplesControl), each sweep
  // costs exactly the counter reads and LID checks.
  REQUIRE(eventually([&] { return totals().second >= 2; }));
  const auto [m0, s0] = totals();
  REQUIRE(eventually([&] { return totals().second >= s0 + 2; }));
  const auto [m1, s1] = totals();
  const double per_sweep = (m1 - m0) / (s1 - s0);
  INFO("MADs per sweep with the groups off: " << per_sweep);
  const Series s = daemon.series();
  CHECK(count_family(s, "infiniband_port_looping_errors_total") == 0);
  CHECK(count_family(s, "infiniband_port_vl_transmit_wait_total") == 0);
  // Every port read costs 2 MADs (PortCountersExtended + PortCounters, as
  // ibsim has no CapabilityMask2) plus one NodeInfo check per switch and
  // HCA port; nothing else.
  const double ports =
      static_cast<double>(count_family(s, "infiniband_port_transmit_wait_seconds_total"));
  CHECK(per_sweep >= 2 * ports);
  CHECK(per_sweep <= 3 * ports);
}
