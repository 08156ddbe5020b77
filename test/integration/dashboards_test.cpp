// Proof that the Grafana dashboards and Prometheus rules in dashboards/ work
// against the real thing: a real Prometheus (Debian's /usr/bin/prometheus)
// scrapes the daemon on a simulated fabric that the scenario driver animates
// with a congested spine port, a bad cable, a link that went down, a link that
// trained at 1x and a node that stopped answering. Every query of every panel
// (template variables expanded as Grafana would) must parse, return data and
// stay in the range its unit allows; the congested port must top the hotspot
// panels; every rule must evaluate without error.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <stop_token>
#include <thread>

#include "daemon_fixture.h"
#include "prometheus_fixture.h"
#include "test/scenario/scenario.h"
#include "test/support/config_yaml.h"
#include "test/support/mini_json.h"

using namespace ibfx::test;

namespace {

// What each unit allows. Counts and scores ("none", "short") need only be
// finite: a hotspot score is a z-score and goes negative.
void check_range(const std::string& unit, const std::string& expr, double v) {
  INFO("unit " << unit << ", value " << v);
  REQUIRE(std::isfinite(v));
  const bool negated = expr.rfind('-', 0) == 0;  // receive drawn below the axis
  if (unit == "percentunit") {
    CHECK(v >= 0);
    CHECK(v <= 1.0 + 1e-9);
  } else if (unit == "s") {
    CHECK(v >= 0);
    CHECK(v < 3600);
  } else if (unit == "Bps") {
    CHECK(std::abs(v) < 1e14);
    if (!negated) CHECK(v >= 0);
  } else if (unit == "cps" || unit == "reqps" || unit == "pps") {
    CHECK(std::abs(v) < 1e12);
    if (!negated) CHECK(v >= 0);
  } else {
    CHECK((unit == "none" || unit == "short"));
  }
}

std::string describe(const Sample& s) {
  std::string out = "{";
  for (const auto& [k, v] : s.labels) out += k + "=\"" + v + "\",";
  return out + "} " + std::to_string(s.value);
}

// The raw samples of a range query's reply, one series a line:
// "{labels} value@-seconds ..." (seconds before the reply's newest sample,
// the same reference for every series).
std::string describe_matrix(const Json& reply) {
  if (reply["status"].str() != "success") return "error: " + reply["error"].str() + "\n";
  double newest = 0;
  for (const Json& r : reply["data"]["result"].array) {
    for (const Json& pair : r["values"].array) {
      if (!pair.array.empty()) newest = std::max(newest, pair.array[0].number);
    }
  }
  std::string out;
  for (const Json& r : reply["data"]["result"].array) {
    Sample s;
    for (const auto& [k, v] : r["metric"].object) s.labels[k] = v.str();
    const std::string labels = describe(s);
    out += labels.substr(0, labels.rfind(' '));
    for (const Json& pair : r["values"].array) {
      if (pair.array.size() != 2) continue;
      char at[64];
      std::snprintf(at, sizeof at, " %s@-%.1f", pair.array[1].string.c_str(),
                    newest - pair.array[0].number);
      out += at;
    }
    out += "\n";
  }
  return out.empty() ? "(no series)\n" : out;
}

// The last `n` lines of `text`.
std::string tail(const std::string& text, std::size_t n) {
  std::size_t at = text.size();
  for (std::size_t lines = 0; at > 0 && lines <= n; --at) {
    if (text[at - 1] == '\n') ++lines;
  }
  return at == 0 ? text : text.substr(at + 1);
}

// Plays the scenario on the simulated fabric, one simulated second per wall
// second, from construction until destruction: the stall ratios and hotspot
// scores are computed from the counter deltas between two consecutive
// sweeps, so the fabric must keep its traffic for as long as panels are
// read. (A driver that stopped would leave every stall ratio at 0 one sweep
// later, and the top-N panels ranking ports that all score 0.)
// `on_step(i)` runs after step i's console lines.
class Animation {
 public:
  Animation(ScenarioDriver& driver, SimFabric& sim, std::function<void(int)> on_step)
      : thread_([this, &driver, &sim, on_step = std::move(on_step)](std::stop_token stop) {
          auto next = std::chrono::steady_clock::now();
          for (int i = 0; !stop.stop_requested() && !driver.done(); ++i) {
            try {
              for (const std::string& line : driver.step()) sim.console(line);
              if (on_step) on_step(i);
            } catch (const std::exception& e) {
              std::lock_guard lock(mu_);
              error_ = e.what();
              break;
            }
            {
              std::lock_guard lock(mu_);
              steps_ = i + 1;
              lag_ = std::max(lag_, std::chrono::steady_clock::now() - next);
            }
            cv_.notify_all();
            next += std::chrono::seconds(1);
            std::unique_lock lock(mu_);
            cv_.wait_until(lock, stop, next, [] { return false; });
          }
          cv_.notify_all();
        }) {}
  Animation(const Animation&) = delete;
  Animation& operator=(const Animation&) = delete;

  // Waits until `n` steps have been played; false if the animation failed.
  bool wait_steps(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return steps_ >= n || !error_.empty(); });
    return steps_ >= n;
  }
  std::string status() {
    std::lock_guard lock(mu_);
    return std::to_string(steps_) + " steps played, the slowest done " +
           std::to_string(std::chrono::duration<double>(lag_).count()) + " s after its start time" +
           (error_.empty() ? "" : ", then failed: " + error_);
  }

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  int steps_ = 0;
  std::chrono::steady_clock::duration lag_{};
  std::string error_;
  std::jthread thread_;  // last: stopped and joined before the members above go
};

// The scenario: background training traffic on a small rail-optimized fat
// tree, spine-02 port 3 congested, symbol errors on spine-02 port 1 (so the
// drill-down of spine-02 has errors to show), and gpu0003 mlx5_1's link down
// from t = 4 s (a flap with a long down time). The background load stays
// well below saturation (0.3 + 0.3 of line rate): on a loaded machine the
// driver's console lines reach ibsim in bursts, one sweep interval can then
// hold more than a second's traffic, and at 0.8 a leaf port into an HCA read
// as saturated made the congested spine port its victim (a correct verdict
// on those numbers, and a flaky test).
std::string scenario_yaml() {
  return "name: dashboards\nseed: 11\n"
         "fabric:\n  servers: 8\n  rails: 2\n  tiers: 2\n  radix: 8\n"
         "duration: 600\ntick: 1.0\neffects:\n"
         "  - {type: allreduce, load: 0.3}\n"
         "  - {type: cross_rail, load: 0.3}\n"
         "  - {type: congested_port, node: spine-02, port: 3, ratio: 0.7, spread: 0.3}\n"
         "  - {type: symbol_errors, node: spine-02, port: 1, rate: 20}\n"
         "  - {type: flap, node: gpu0003 mlx5_1, port: 1, start: 4, period: 500, down_time: 250}\n";
}

// The net file with one cable (leaf-r0-02[1] <-> gpu0005 mlx5_0[1]) trained
// at 1x instead of 4x: a link below the fabric's norm.
std::string degraded_netfile(const Fabric& fabric) {
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

// 1 when the port's link is up (PortPhysicalState 5, LinkUp), else 0, with
// the node's name joined from infiniband_node_info.
std::string link_up_expr(const std::string& node, int port) {
  return "((infiniband_port_physical_state{port=\"" + std::to_string(port) +
         "\"} == bool 5) * on (instance, node_guid) group_left (node_name) "
         "infiniband_node_info{node_name=\"" +
         node + "\"})";
}

}  // namespace

TEST_CASE("Every dashboard panel returns sane data from a real Prometheus scraping the daemon",
          "[dashboards][integration]") {
  const std::string source = IBFX_SOURCE_DIR;
  ScenarioDriver driver(parse_scenario(scenario_yaml()));
  SimFabric sim(degraded_netfile(driver.fabric()));
  const std::string config = sim.dir() + "/exporter.yaml";
  // The driver's PortXmitWait tick; frequent discoveries so port states
  // (read at discovery) follow the flap within the test.
  // The opt-in groups too, with an error detail on the culprit spine and a
  // stalled VL, so the panels that show them have data (docs/counters.md).
  ConfigYaml()
      .scenario_tick()
      .set("discovery.interval", "2s")
      .set("counters.error_details", "true")
      .set("counters.vl_transmit_wait", "true")
      .write(config);
  sim.perf_set("spine-02", 1, "PortRcvErrorDetails.PortLocalPhysicalErrors", 12);
  sim.perf_set("spine-02", 1, "PortVLXmitWaitCounters.PortVLXmitWaitCounters1", 4000);
  Daemon daemon(sim, {"--config.file=" + config});
  REQUIRE(daemon.wait_ready());
  Prometheus prom(daemon.port(), source + "/dashboards/rules/ibfabric_exporter.rules.yaml");

  // The "Ports down" panel lists the ports that are down and were up within
  // its range, so Prometheus must have scraped the flapped link up before
  // the scenario takes it down. /-/ready does not mean that: Prometheus
  // starts its scrape pools on a 5 s tick, and its first scrape came 5-6 s
  // after /-/ready here, when the scenario used to flap the link at 4 s; the
  // daemon reporting the flap a little early (it takes a sweep and a
  // discovery) was enough for the panel to rightly leave the link out.
  const std::string link_up = link_up_expr("gpu0003 mlx5_1", 1) + " == 1 and on () " +
                              link_up_expr("leaf-r1-01", 3) + " == 1";
  if (!eventually([&] { return samples(prom.query(link_up)).size() == 1; },
                  std::chrono::seconds(30))) {
    INFO(prom.targets() << "prometheus log (tail):\n" << tail(prom.log(), 20));
    FAIL("Prometheus did not scrape the flapped link up: " << link_up);
  }

  // The scenario runs until the end of the test (the animation is destroyed
  // first); gpu0007 mlx5_0 stops answering its PMA after 8 simulated seconds
  // (ibsim drops every MAD to it). The panels are read after 16.
  Animation animation(driver, sim, [&](int step) {
    if (step == 8) sim.error_rate("gpu0007 mlx5_0", 1, 100);
  });
  if (!animation.wait_steps(16)) FAIL("the scenario stopped: " << animation.status());
  // What the daemon and Prometheus were doing, printed with any failed check
  // below so that a failure explains itself: Prometheus' view of its scrapes,
  // the samples it holds of the faulted ports and nodes, the daemon's current
  // exposition of them, its own metrics and the tail of both logs.
  const std::string faulted = "gpu0003 mlx5_1|leaf-r1-01|gpu0005 mlx5_0|gpu0007 mlx5_0";
  auto explain = [&] {
    std::ostringstream out;
    out << "---- state when the check failed\n";
    out << "scenario: " << animation.status() << "\n";
    try {
      out << prom.targets();
      out << "prometheus samples of the last 60 s (value@-seconds):\n";
      const std::vector<std::string> selectors = {
          "up",
          "scrape_duration_seconds",
          "infiniband_port_physical_state{port=~\"1|3\"} * on (instance, node_guid) "
          "group_left (node_name) infiniband_node_info{node_name=~\"gpu0003 mlx5_1|leaf-r1-01\"}",
          "infiniband_exporter_node_up * on (instance, node_guid) group_left (node_name) "
          "infiniband_node_info{node_name=~\"" +
              faulted + "\"}",
          "infiniband_exporter_node_up == 0",
          "infiniband_exporter_nodes_not_answering",
          "topk(3, rate(infiniband_port_transmit_wait_seconds_total[30s]))"};
      for (const std::string& selector : selectors) {
        // A plain selector's raw samples; an expression's, through a subquery.
        const std::string range =
            selector.find('(') == std::string::npos && selector.find("==") == std::string::npos
                ? selector + "[60s]"
                : "(" + selector + ")[60s:1s]";
        out << selector << ":\n" << describe_matrix(prom.query(range));
      }
    } catch (const std::exception& e) {
      out << "prometheus API failed: " << e.what() << "\n";
    }
    out << "daemon exposition of the faulted nodes and its own metrics:\n";
    try {
      std::istringstream metrics(daemon.metrics());
      const std::regex involved("^(infiniband_port_info|infiniband_node_info)\\{.*node_name=\"(" +
                                faulted + ")\".*|^infiniband_exporter_[a-z_]+(\\{.*)? .*");
      for (std::string line; std::getline(metrics, line);) {
        if (line.find("_bucket") == std::string::npos && std::regex_match(line, involved)) {
          out << "  " << line << "\n";
        }
      }
    } catch (const std::exception& e) {
      out << "  /metrics failed: " << e.what() << "\n";
    }
    out << "daemon log (tail):\n" << tail(daemon.process().read_stderr(), 60);
    out << "prometheus log (tail):\n" << tail(prom.log(), 20);
    return out.str();
  };

  // Recording rules have run on enough samples for every rate window, and
  // Prometheus has scraped the faults the table panels must show.
  const std::vector<std::pair<std::string, std::string>> settled = {
      {"the error-rate rule has the cable with symbol errors",
       "node_port:infiniband_port_errors:rate5m{node_name=\"spine-02\",port=\"1\"}"},
      {"the below-norm rule has the 1x link",
       "node_port:infiniband_port_rate_bytes_per_second:below_peers{node_name=\"gpu0005 "
       "mlx5_0\",port=\"1\"}"},
      {"gpu0007 mlx5_0 is not answering",
       "infiniband_exporter_node_up * on (instance, node_guid) group_left (node_name) "
       "infiniband_node_info{node_name=\"gpu0007 mlx5_0\"} == 0"},
      {"the flapped link is down",
       link_up_expr("gpu0003 mlx5_1", 1) + " == 0 or " + link_up_expr("leaf-r1-01", 3) + " == 0"},
  };
  auto unsettled = [&] {
    std::string out;
    for (const auto& [what, promql] : settled) {
      if (samples(prom.query(promql)).empty()) out += "not yet: " + what + " (" + promql + ")\n";
    }
    return out;
  };
  // (Port states come from discovery, which runs in a child process: slow
  // under the sanitizers.)
  if (!eventually([&] { return unsettled().empty(); }, std::chrono::seconds(30))) {
    INFO(unsettled());
    INFO(explain());
    FAIL("Prometheus never saw the scenario's faults");
  }

  // Every rule evaluates without error on the real exposition.
  const Json rules = prom.api("/api/v1/rules");
  REQUIRE(rules["status"].str() == "success");
  std::size_t rule_count = 0;
  for (const Json& g : rules["data"]["groups"].array) {
    for (const Json& r : g["rules"].array) {
      INFO(r["name"].str() << ": " << r["lastError"].str());
      CHECK(r["health"].str() == "ok");
      ++rule_count;
    }
  }
  CHECK(rule_count == 23);

  // Values chosen for the template variables: "All" (allValue) where the
  // variable has it, else the congested switch.
  const std::string culprit = "spine-02";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(source + "/dashboards")) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 4);

  // A check that prints explain() when it fails (the condition is pure: it
  // is evaluated again for Catch's message).
#define CHECK_EXPLAINED(...) \
  do {                       \
    if (!(__VA_ARGS__)) {    \
      INFO(explain());       \
      CHECK(__VA_ARGS__);    \
    } else {                 \
      CHECK(__VA_ARGS__);    \
    }                        \
  } while (false)

  std::size_t queries = 0;
  for (const std::string& file : files) {
    const Json dash = parse_json(read_file(file));
    const std::string uid = dash["uid"].str();
    INFO("dashboard " << uid);
    // The jobs dashboard (ibfx-jobs.json) reads the Slurm job series, and
    // this test runs no Slurm (jobs.source: none): its job_id variable has
    // no value and its panels are EMPTY here, which is checked; each query
    // must still be valid PromQL. The series it reads are checked against
    // a real Slurm in slurm_jobs_test.cpp.
    const bool no_jobs = uid == "ibfx-jobs";
    std::map<std::string, std::string> vars = {
        {"__rate_interval", "10s"}, {"__interval", "1s"}, {"__range", "5m"}};
    std::map<std::string, std::vector<std::string>> real_values;
    for (const Json& v : dash["templating"]["list"].array) {
      if (v["type"].str() != "query") continue;
      if (v["query"].str().rfind("query_result(", 0) == 0) {
        // The drill-down's node: values are node GUIDs, texts node names,
        // from the labels of the query's series (the variable's regex).
        const std::string q = v["query"].str();
        const std::string expanded = expand(q.substr(13, q.size() - 14), vars);
        INFO("variable " << v["name"].str() << ": " << expanded);
        std::vector<std::string> guids;
        std::string culprit_guid;
        for (const Sample& s : samples(prom.query(expanded))) {
          guids.push_back(s.labels.at("node_guid"));
          if (s.labels.at("node_name") == culprit) culprit_guid = guids.back();
        }
        REQUIRE(!culprit_guid.empty());
        real_values[v["name"].str()] = guids;
        vars[v["name"].str()] = culprit_guid;
        continue;
      }
      const auto [selector, label] = parse_label_values(v["query"].str());
      const std::string expanded = expand(selector, vars);
      INFO("variable " << v["name"].str() << ": label_values(" << expanded << ", " << label << ")");
      const auto values = prom.label_values(label, expanded);
      if (no_jobs && v["name"].str() == "job_id") {
        CHECK(values.empty());
        vars["job_id"] = "1";
        continue;
      }
      CHECK(!values.empty());
      real_values[v["name"].str()] = values;
      if (v["includeAll"].boolean) {
        vars[v["name"].str()] = v["allValue"].str();
      } else {
        REQUIRE(std::find(values.begin(), values.end(), culprit) != values.end());
        vars[v["name"].str()] = culprit;
      }
    }

    for (const Json& panel : dash["panels"].array) {
      if (panel["type"].str() == "row") continue;
      const std::string title = panel["title"].str();
      const std::string unit = panel["fieldConfig"]["defaults"]["unit"].str();
      // A repeated panel runs once per real value of its variable.
      std::vector<std::map<std::string, std::string>> instances;
      if (const std::string repeat = panel["repeat"].str(); !repeat.empty()) {
        REQUIRE(!real_values[repeat].empty());
        for (const std::string& value : real_values[repeat]) {
          auto copy = vars;
          copy[repeat] = value;
          instances.push_back(copy);
        }
      } else {
        instances.push_back(vars);
      }
      std::vector<Sample> all;
      for (const auto& instance : instances) {
        for (const Json& t : panel["targets"].array) {
          const std::string expr = expand(t["expr"].str(), instance);
          INFO("panel \"" << title << "\" query " << t["refId"].str() << ": " << expr);
          CHECK(expr.find('$') == std::string::npos);
          const Json reply = prom.query(expr);
          INFO(reply["error"].str());
          REQUIRE(reply["status"].str() == "success");
          const auto result = samples(reply);
          if (no_jobs) {
            // Only "Roots hitting it" answers without jobs: `or vector(0)`.
            for (const Sample& sample : result) CHECK(sample.value == 0);
            ++queries;
            continue;
          }
          CHECK_EXPLAINED(!result.empty());
          for (const Sample& s : result) {
            INFO(describe(s));
            check_range(unit, expr, s.value);
          }
          all.insert(all.end(), result.begin(), result.end());
          ++queries;
        }
      }

      // The injected faults show where they should.
      auto has = [&](const std::string& node, const std::string& port) {
        return std::any_of(all.begin(), all.end(), [&](const Sample& s) {
          auto n = s.labels.find("node_name");
          auto p = s.labels.find("port");
          return n != s.labels.end() && n->second == node &&
                 (port.empty() || (p != s.labels.end() && p->second == port));
        });
      };
      std::string lower = title;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      });
      INFO("panel \"" << title << "\"");
      if (uid == "ibfx-heatmap-of-pain" && panel["type"].str() != "stat" &&
          (lower.find("hotspot") != std::string::npos || lower.rfind("top", 0) == 0 ||
           lower.find("spines and cores") != std::string::npos)) {
        const bool port_level = std::any_of(all.begin(), all.end(), [](const Sample& s) {
          auto p = s.labels.find("port");
          return p != s.labels.end() && !p->second.empty();
        });
        std::string listing;
        for (const Sample& s : all) listing += describe(s) + "\n";
        INFO(listing);
        CHECK_EXPLAINED(has(culprit, port_level ? "3" : ""));
        if (lower.rfind("top", 0) == 0) {  // the top-N panels rank it first
          const auto top =
              std::max_element(all.begin(), all.end(),
                               [](const Sample& a, const Sample& b) { return a.value < b.value; });
          REQUIRE(top != all.end());
          CHECK_EXPLAINED(top->labels["node_name"] == culprit);
          CHECK_EXPLAINED(top->labels["port"] == "3");
          if (lower.find("stalled") != std::string::npos) {
            CHECK_EXPLAINED(top->labels["remote_node_name"] == "leaf-r1-01");
          }
        }
      }
      if (panel["type"].str() == "table") {
        std::string listing;
        for (const Sample& s : all) listing += describe(s) + "\n";
        INFO(listing);
        // Either end of the cable: an HCA whose only link is down may drop
        // out of the next discovery, its leaf's port stays.
        if (title == "Ports down")
          CHECK_EXPLAINED((has("gpu0003 mlx5_1", "1") || has("leaf-r1-01", "3")));
        if (title == "Links below the fabric's norm") CHECK_EXPLAINED(has("gpu0005 mlx5_0", "1"));
        if (title == "Nodes not answering") CHECK_EXPLAINED(has("gpu0007 mlx5_0", ""));
        if (title == "Ports with errors") CHECK_EXPLAINED(has(culprit, "1"));
        // The congested spine port is the root its stalled uplinks chain to.
        if (title == "Roots of congestion") CHECK_EXPLAINED(has(culprit, "3"));
      }
    }
  }
  CHECK(queries > 40);
#undef CHECK_EXPLAINED
}
