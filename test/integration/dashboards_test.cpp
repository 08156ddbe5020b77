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
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "animation.h"
#include "daemon_fixture.h"
#include "dashboard_queries.h"
#include "doc_queries.h"
#include "prometheus_fixture.h"
#include "shell.h"
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

// 1 when the port's link is up (PortPhysicalState 5, LinkUp), else 0, with
// the node's name joined from infiniband_node_info.
std::string link_up_expr(const std::string& node, int port) {
  return "((infiniband_port_physical_state{port=\"" + std::to_string(port) +
         "\"} == bool 5) * on (instance, node_guid) group_left (node_name) "
         "infiniband_node_info{node_name=\"" +
         node + "\"})";
}

// What the docs' queries (docs/jobs.md's aside) say they return, on the
// scenario here: spine-02 port 3 congested and its port 1 counting symbol
// errors, the cable gpu0003 mlx5_1 - leaf-r1-01 down, gpu0005 mlx5_0's
// cable trained at 1x. Read when Prometheus has seen all of it.
std::vector<DocClaim> dashboards_doc_claims(const Prometheus& prom) {
  auto guid_of = [&prom](const std::string& node) {
    const auto info = samples(prom.query("infiniband_node_info{node_name=\"" + node + "\"}"));
    REQUIRE(info.size() == 1);
    return doc_label(info[0], "node_guid");
  };
  auto count_of = [&prom](const std::string& promql) { return samples(prom.query(promql)).size(); };
  const std::string culprit = guid_of(kCulprit);
  // The flapped cable, one series with both ends named and both ports
  // (dashboards.md: "one series per cable, with both ends as labels").
  auto flapped_cable = [](const std::vector<Sample>& found) {
    CHECK(std::count_if(found.begin(), found.end(), [](const Sample& s) {
            return std::set<std::string>{doc_label(s, "node_name"),
                                         doc_label(s, "remote_node_name")} ==
                       std::set<std::string>{"gpu0003 mlx5_1", "leaf-r1-01"} &&
                   !doc_label(s, "port").empty() && !doc_label(s, "remote_port").empty();
          }) == 1);
    for (const Sample& s : found) CHECK(s.labels.count("condition") == 1);
  };
  // Each (tier, rail) the stall histogram has.
  auto tiers_and_rails = [](const std::vector<Sample>& found) {
    std::multiset<std::pair<std::string, std::string>> out;
    for (const Sample& s : found) out.insert({doc_label(s, "tier"), doc_label(s, "rail")});
    return out;
  };
  const auto histogram_groups = tiers_and_rails(
      samples(prom.query("count by (tier, rail) (infiniband_port_stall_ratio_bucket)")));
  return {
      {"docs/dashboards.md",
       "The 10 most stalled ports right now",
       {},
       [=](const std::vector<Sample>& found) {
         CHECK(found.size() ==
               std::min<std::size_t>(10, count_of("infiniband_port_transmit_wait_seconds_total")));
         const auto top =
             std::max_element(found.begin(), found.end(),
                              [](const Sample& a, const Sample& b) { return a.value < b.value; });
         REQUIRE(top != found.end());
         CHECK(doc_label(*top, "node_guid") == culprit);
         CHECK(doc_label(*top, "port") == "3");
       }},
      {"docs/dashboards.md",
       "The p99 stall of each tier and rail over the last day",
       {},
       [=](const std::vector<Sample>& found) {
         // One series per tier and rail, labelled by them only (spines
         // and cores serving several rails have no rail).
         CHECK(tiers_and_rails(found) == histogram_groups);
         for (const Sample& s : found) {
           INFO(doc_listing({s}));
           for (const auto& label : s.labels)
             CHECK((label.first == "tier" || label.first == "rail"));
           CHECK(s.value >= 0);  // false for NaN
           CHECK(s.value <= 1);
         }
       }},
      {"docs/dashboards.md",
       "Ports whose link errors are rising (a recording rule)",
       {},
       [=](const std::vector<Sample>& found) {
         for (const Sample& s : found) CHECK(s.value > 0);
         CHECK(std::any_of(found.begin(), found.end(), [](const Sample& s) {
           return doc_label(s, "node_name") == kCulprit && doc_label(s, "port") == "1";
         }));
       }},
      {"docs/dashboards.md",
       "Links down, both ends named (a recording rule over the daemon's "
       "infiniband_link_unhealthy)",
       {},
       flapped_cable},
      {"docs/dashboards.md",
       "The same without the rules: node_name and port at one end, remote_node_name and "
       "remote_port at the other",
       {},
       flapped_cable},
      {"docs/metrics.md",
       "any per-port series with its node's name, tier and rail, and the far end of the cable "
       "(a port whose link is down may have none)",
       {},
       [=](const std::vector<Sample>& found) {
         // Every cabled port, each with its node's labels and its far end.
         CHECK(found.size() == count_of("infiniband_port_transmit_data_bytes_total and on "
                                        "(instance, node_guid, port) infiniband_port_info"));
         for (const Sample& s : found) {
           INFO(doc_listing({s}));
           CHECK(!doc_label(s, "node_name").empty());
           CHECK(!doc_label(s, "tier").empty());
           // The far end of every port whose link is up (discovery loses a
           // down cable's far end at one end or both: docs/dashboards.md).
           const bool up =
               count_of("infiniband_port_physical_state{node_guid=\"" + doc_label(s, "node_guid") +
                        "\",port=\"" + doc_label(s, "port") + "\"} == 5") == 1;
           if (up) {
             CHECK(!doc_label(s, "remote_node_name").empty());
             CHECK(!doc_label(s, "remote_port").empty());
           }
           CHECK(count_of("infiniband_node_info{node_guid=\"" + doc_label(s, "node_guid") +
                          "\",node_name=\"" + doc_label(s, "node_name") + "\",tier=\"" +
                          doc_label(s, "tier") + "\",rail=\"" + doc_label(s, "rail") + "\"}") == 1);
         }
       }},
      {"docs/nodes.md",
       "how many hosts it drains (empty when none)",
       {},
       [=, &prom](const std::vector<Sample>& found) {
         // None: the three unhealthy hosts are a fabric incident, which
         // drains nobody, and count() of nothing is nothing, not 0.
         CHECK(count_of("infiniband_node_fabric_incident") == 3);
         CHECK(found.empty());
         CHECK(samples(prom.query("infiniband_node_unhealthy")).empty());
       }},
      {"docs/nodes.md",
       "each host short of rails, by how many",
       {},
       [=](const std::vector<Sample>& found) {
         // gpu0003, whose mlx5_1 is down, and gpu0007, whose mlx5_0 does
         // not answer: 1 of 2 rails each. gpu0005's 1x cable is up.
         std::map<std::string, double> short_of;
         for (const Sample& s : found) short_of[doc_label(s, "host")] = s.value;
         CHECK(short_of == std::map<std::string, double>{{"gpu0003", 1}, {"gpu0007", 1}});
       }},
  };
}

}  // namespace

TEST_CASE("Every dashboard panel returns sane data from a real Prometheus scraping the daemon",
          "[dashboards][integration]") {
  const std::string source = IBFX_SOURCE_DIR;
  ScenarioDriver driver(parse_scenario(faults_scenario_yaml()));
  SimFabric sim(degraded_netfile(driver.fabric()));
  Daemon daemon(sim, {faults_daemon_config(sim)});
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
      const std::string flapped_states =
          "infiniband_port_physical_state{port=~\"1|3\"} * on (instance, node_guid) "
          "group_left (node_name) infiniband_node_info{node_name=~\"gpu0003 mlx5_1|leaf-r1-01\"}";
      const std::vector<std::string> selectors = {
          "up",
          "scrape_duration_seconds",
          flapped_states,
          "infiniband_exporter_node_up * on (instance, node_guid) group_left (node_name) "
          "infiniband_node_info{node_name=~\"" +
              faulted + "\"}",
          "infiniband_exporter_node_up == 0",
          "infiniband_exporter_nodes_not_answering",
          "{__name__=~\"infiniband_node_unhealthy|infiniband_node_fabric_incident\"}",
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
      // Link health (issue #34): the daemon's verdicts, named by the rule.
      {"the link rule has the cable with symbol errors",
       "link:infiniband_link_unhealthy:named{condition=\"ber_error\",node_name=\"spine-02\","
       "port=\"1\"}"},
      {"the link rule has the flapped link down",
       "link:infiniband_link_unhealthy:named{condition=\"down\"}"},
      {"the link rule has the 1x link degraded",
       "link:infiniband_link_unhealthy:named{condition=\"degraded\"}"},
      // Node health (docs/nodes.md): the hosts of the down and the 1x
      // cable and the one whose HCA stopped answering are unhealthy, three
      // within nodes.incident_window: the blast-radius guard holds them.
      {"gpu0003, gpu0005 and gpu0007 are held as a fabric incident",
       "count(infiniband_node_fabric_incident{host=~\"gpu0003|gpu0005|gpu0007\"}) == 3"},
  };
  auto unsettled = [&] {
    std::string out;
    for (const auto& [what, promql] : settled) {
      if (samples(prom.query(promql)).empty())
        out.append("not yet: ").append(what).append(" (").append(promql).append(")\n");
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
  CHECK(rule_count == shipped_rule_count());
  CHECK(rule_count >= 25);

  // The link alerts' queries (issue #34) find each injected fault on its
  // cable, as the rules API hands them to Prometheus: the symbol errors
  // counted at spine-02 port 1's receiver, the flapped link down (either
  // end may be node_*), the 1x cable degraded.
  {
    std::map<std::string, std::string> alert_query;
    for (const Json& g : rules["data"]["groups"].array) {
      for (const Json& r : g["rules"].array) {
        if (r["type"].str() == "alerting") alert_query[r["name"].str()] = r["query"].str();
      }
    }
    auto cable = [&](const std::string& alert, const std::string& end, const std::string& port,
                     const std::string& other) {
      REQUIRE(alert_query.count(alert) == 1);
      const auto found = samples(prom.query(alert_query[alert]));
      std::string listing;
      for (const Sample& s : found) listing += describe(s) + "\n";
      INFO(alert << ": " << alert_query[alert] << "\n" << listing);
      return std::any_of(found.begin(), found.end(), [&](const Sample& s) {
        auto label = [&](const char* k) {
          const auto it = s.labels.find(k);
          return it == s.labels.end() ? std::string() : it->second;
        };
        const bool here = label("node_name") == end && (port.empty() || label("port") == port) &&
                          (other.empty() || label("remote_node_name") == other);
        const bool there = port.empty() && label("remote_node_name") == end &&
                           (other.empty() || label("node_name") == other);
        return here || there;
      });
    };
    CHECK(cable("InfinibandLinkBerError", kCulprit, "1", ""));
    CHECK(cable("InfinibandLinkDown", "gpu0003 mlx5_1", "", "leaf-r1-01"));
    CHECK(cable("InfinibandLinkDegraded", "gpu0005 mlx5_0", "", "leaf-r0-02"));
    // Every PromQL query the docs show runs on a real Prometheus: a query a
    // reader copies never answers an error (a label matcher or a function
    // Prometheus refuses at run time).
    for (const DocQuery& q : doc_queries()) {
      INFO(q.file << ":" << q.line << ": " << q.query);
      const Json reply = prom.query(q.query);
      INFO(reply["error"].str());
      CHECK(reply["status"].str() == "success");
    }
    // And returns what its sentence says, on this fabric (docs/jobs.md's,
    // which need jobs: slurm_jobs_test.cpp).
    check_doc_claims(prom, {"README.md", "docs/dashboards.md", "docs/metrics.md", "docs/nodes.md"},
                     dashboards_doc_claims(prom));
    // The BER itself, of the receiving port only (sparse), and the events
    // each condition opened.
    const auto ber = samples(
        prom.query("infiniband_port_symbol_ber * on (instance, node_guid) group_left (node_name) "
                   "infiniband_node_info"));
    std::string listing;
    for (const Sample& s : ber) listing += describe(s) + "\n";
    INFO("infiniband_port_symbol_ber:\n" << listing);
    REQUIRE(ber.size() == 1);
    CHECK(ber[0].labels.at("node_name") == kCulprit);
    CHECK(ber[0].labels.at("port") == "1");
    CHECK(ber[0].value >= 1e-12);
    for (const char* condition : {"ber_error", "down", "degraded"}) {
      INFO("infiniband_link_events_total{condition=\"" << condition << "\"}");
      const auto events = samples(
          prom.query("infiniband_link_events_total{condition=\"" + std::string(condition) + "\"}"));
      REQUIRE(events.size() == 1);
      CHECK(events[0].value >= 1);
    }
  }

  const std::string culprit = kCulprit;
  const std::vector<std::string> files = dashboard_files();
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
    const bool no_jobs = reads_slurm_jobs(dash);
    for (const std::vector<PanelQuery>& panel :
         panel_queries(dash, resolve_variables(dash, prom))) {
      const std::string title = panel.front().title;
      std::vector<Sample> all;
      for (const PanelQuery& q : panel) {
        const std::string& expr = q.expr;
        INFO("panel \"" << title << "\" query " << q.ref << ": " << expr);
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
          check_range(q.unit, expr, s.value);
        }
        all.insert(all.end(), result.begin(), result.end());
        ++queries;
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
      if (uid == "ibfx-heatmap-of-pain" && panel.front().type != "stat" &&
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
      if (panel.front().type == "table") {
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
