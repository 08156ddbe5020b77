// What the tests of the shipped dashboards and rules share: the simulated
// fabric with the faults every panel has something to show for, and every
// query of every panel of dashboards/*.json with its template variables
// expanded as Grafana would, against any store that speaks the Prometheus
// query API (Prometheus, VictoriaMetrics).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "loopback_service.h"
#include "prometheus_fixture.h"
#include "test/scenario/scenario.h"
#include "test/support/config_yaml.h"
#include "test/support/mini_json.h"

namespace ibfx::test {

// The scenario: background training traffic on a small rail-optimized fat
// tree, spine-02 port 3 congested, symbol errors on spine-02 port 1 (so the
// drill-down of spine-02 has errors to show), and gpu0003 mlx5_1's link down
// from t = 4 s (a flap with a long down time). The background load stays
// well below saturation (0.3 + 0.3 of line rate): on a loaded machine the
// driver's console lines reach ibsim in bursts, one sweep interval can then
// hold more than a second's traffic, and at 0.8 a leaf port into an HCA read
// as saturated made the congested spine port its victim (a correct verdict
// on those numbers, and a flaky test).
inline std::string faults_scenario_yaml() {
  return "name: dashboards\nseed: 11\n"
         "fabric:\n  servers: 8\n  rails: 2\n  tiers: 2\n  radix: 8\n"
         "duration: 600\ntick: 1.0\neffects:\n"
         "  - {type: allreduce, load: 0.3}\n"
         "  - {type: cross_rail, load: 0.3}\n"
         "  - {type: congested_port, node: spine-02, port: 3, ratio: 0.7, spread: 0.3}\n"
         "  - {type: symbol_errors, node: spine-02, port: 1, rate: 20}\n"
         "  - {type: flap, node: gpu0003 mlx5_1, port: 1, start: 4, period: 500, down_time: 250}\n";
}
// The switch the scenario congests (port 3) and whose port 1 counts errors.
inline const std::string kCulprit = "spine-02";

// The net file with one cable (leaf-r0-02[1] <-> gpu0005 mlx5_0[1]) trained
// at 1x instead of 4x: a link below the fabric's norm.
inline std::string degraded_netfile(const Fabric& fabric) {
  std::string net = fabric.to_netfile();
  for (const char* cable_end :
       {"\"gpu0005 mlx5_0\"[1]\t# lid 0 4xHDR", "\"leaf-r0-02\"[1]\t# lid 0 4xHDR"}) {
    const std::string end = cable_end;
    const auto at = net.find(end);
    REQUIRE(at != std::string::npos);
    net.replace(at + end.size() - 5, 1, "1");
  }
  return net;
}

// The daemon's configuration for the scenario (returns its --config.file
// flag): the driver's PortXmitWait tick; frequent discoveries so port states
// (read at discovery) follow the flap within the test; the opt-in groups
// too, with an error detail on the culprit spine and a stalled VL, so the
// panels that show them have data (docs/counters.md).
inline std::string faults_daemon_config(SimFabric& sim) {
  const std::string config = sim.dir() + "/exporter.yaml";
  ConfigYaml()
      .scenario_tick()
      .set("discovery.interval", "2s")
      .set("counters.error_details", "true")
      .set("counters.vl_transmit_wait", "true")
      .write(config);
  sim.perf_set(kCulprit, 1, "PortRcvErrorDetails.PortLocalPhysicalErrors", 12);
  sim.perf_set(kCulprit, 1, "PortVLXmitWaitCounters.PortVLXmitWaitCounters1", 4000);
  return "--config.file=" + config;
}

inline std::string describe(const Sample& s) {
  std::string out = "{";
  for (const auto& [k, v] : s.labels) out += k + "=\"" + v + "\",";
  return out + "} " + std::to_string(s.value);
}

// The dashboards' JSON files, sorted.
// The rules the shipped file holds (its "- alert:" and "- record:"
// entries): what a Prometheus or vmalert loading it must report, counted
// from the file rather than written again here (each new rule changed it).
inline std::size_t shipped_rule_count() {
  std::ifstream in(std::string(IBFX_SOURCE_DIR) + "/dashboards/rules/ibfabric_exporter.rules.yaml");
  std::size_t count = 0;
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const std::string_view rest = std::string_view(line).substr(first);
    if (rest.starts_with("- alert:") || rest.starts_with("- record:")) ++count;
  }
  return count;
}

inline std::vector<std::string> dashboard_files() {
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(IBFX_SOURCE_DIR) + "/dashboards")) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A dashboard's template variables resolved against a store: the value
// chosen for each ("All" (allValue) where the variable has it, else the
// culprit switch) and every value the store offers.
struct DashboardVariables {
  std::map<std::string, std::string> chosen = {
      {"__rate_interval", "10s"}, {"__interval", "1s"}, {"__range", "5m"}};
  std::map<std::string, std::vector<std::string>> values;
};

// The jobs dashboard (ibfx-jobs.json) reads the Slurm job series: without
// Slurm (jobs.source: none) its job_id variable has no value and its panels
// are empty; each query must still be valid. The series it reads are
// checked against a real Slurm in slurm_jobs_test.cpp.
inline bool reads_slurm_jobs(const Json& dash) { return dash["uid"].str() == "ibfx-jobs"; }

inline DashboardVariables resolve_variables(const Json& dash, const QueryService& store) {
  DashboardVariables vars;
  for (const Json& v : dash["templating"]["list"].array) {
    if (v["type"].str() != "query") continue;
    const std::string name = v["name"].str();
    if (v["query"].str().rfind("query_result(", 0) == 0) {
      // The drill-down's node: values are node GUIDs, texts node names,
      // from the labels of the query's series (the variable's regex).
      const std::string q = v["query"].str();
      const std::string expanded = expand(q.substr(13, q.size() - 14), vars.chosen);
      INFO("variable " << name << ": " << expanded);
      std::vector<std::string> guids;
      std::string culprit_guid;
      for (const Sample& s : samples(store.query(expanded))) {
        guids.push_back(s.labels.at("node_guid"));
        if (s.labels.at("node_name") == kCulprit) culprit_guid = guids.back();
      }
      REQUIRE(!culprit_guid.empty());
      vars.values[name] = guids;
      vars.chosen[name] = culprit_guid;
      continue;
    }
    const auto [selector, label] = parse_label_values(v["query"].str());
    const std::string expanded = expand(selector, vars.chosen);
    INFO("variable " << name << ": label_values(" << expanded << ", " << label << ")");
    const auto values = store.label_values(label, expanded);
    if (reads_slurm_jobs(dash) && name == "job_id") {
      CHECK(values.empty());
      vars.chosen["job_id"] = "1";
      continue;
    }
    CHECK(!values.empty());
    vars.values[name] = values;
    if (v["includeAll"].boolean) {
      vars.chosen[name] = v["allValue"].str();
    } else {
      REQUIRE(std::find(values.begin(), values.end(), kCulprit) != values.end());
      vars.chosen[name] = kCulprit;
    }
  }
  return vars;
}

// One query of one panel (a repeated panel's once per value of its
// variable), template variables expanded.
struct PanelQuery {
  std::string title;
  std::string type;  // "table", "stat", "timeseries", ...
  std::string unit;
  std::string ref;  // the target's refId
  std::string expr;
};

// Every panel's queries, in the dashboard's order; each inner vector is one
// panel (all its targets, all its repetitions).
inline std::vector<std::vector<PanelQuery>> panel_queries(const Json& dash,
                                                          const DashboardVariables& vars) {
  std::vector<std::vector<PanelQuery>> out;
  for (const Json& panel : dash["panels"].array) {
    if (panel["type"].str() == "row") continue;
    std::vector<std::map<std::string, std::string>> instances;
    if (const std::string repeat = panel["repeat"].str(); !repeat.empty()) {
      const auto it = vars.values.find(repeat);
      REQUIRE(it != vars.values.end());
      REQUIRE(!it->second.empty());
      for (const std::string& value : it->second) {
        auto copy = vars.chosen;
        copy[repeat] = value;
        instances.push_back(copy);
      }
    } else {
      instances.push_back(vars.chosen);
    }
    std::vector<PanelQuery> queries;
    for (const auto& instance : instances) {
      for (const Json& t : panel["targets"].array) {
        queries.push_back({panel["title"].str(), panel["type"].str(),
                           panel["fieldConfig"]["defaults"]["unit"].str(), t["refId"].str(),
                           expand(t["expr"].str(), instance)});
      }
    }
    out.push_back(std::move(queries));
  }
  return out;
}

}  // namespace ibfx::test
