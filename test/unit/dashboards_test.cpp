// Static checks of what dashboards/ ships: the structure of every Grafana
// dashboard (the things that break an import or a panel silently: duplicate
// ids, overlapping panels, a hard-coded data source, a missing unit, a colour
// scale that drifts with the data), the provisioning files (vmagent and
// Prometheus agent-mode configurations too), and the Prometheus rules
// through promtool (check + unit tests, with an alert-coverage check) and
// vmalert.
// The queries themselves run against a real Prometheus in
// test/integration/dashboards_test.cpp.
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/mini_json.h"

using ibfx::test::Json;
using ibfx::test::JsonReader;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const std::string kDir = std::string(IBFX_SOURCE_DIR) + "/dashboards";
const std::set<std::string> kUids = {"ibfx-heatmap-of-pain", "ibfx-fabric-overview",
                                     "ibfx-drilldown", "ibfx-jobs"};
// The import dialog's data source (__inputs) and, when the dashboards are
// provisioned from files (no import), the data source variable of that name.
const std::string kDatasourceRef = "${DS_PROMETHEUS}";
// The stall ratio at which every panel turns red: the heatmaps' colour
// scale ends there and the stat, table and graph thresholds step to red there.
constexpr double kStallRed = 0.3;

std::vector<std::string> dashboard_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every panel, rows' nested panels included.
void collect_panels(const Json& list, std::vector<const Json*>& out) {
  for (const Json& p : list.array) {
    out.push_back(&p);
    collect_panels(p["panels"], out);
  }
}

bool is_datasource_ref(const Json& ds) {
  return ds["type"].str() == "prometheus" && ds["uid"].str() == kDatasourceRef;
}

// Every object under a "datasource" key anywhere in the document, with a
// path for messages.
void collect_datasources(const Json& j, const std::string& path,
                         std::vector<std::pair<std::string, const Json*>>& out) {
  for (const auto& [k, v] : j.object) {
    if (k == "datasource") out.emplace_back(path + "." + k, &v);
    collect_datasources(v, path + "." + k, out);
  }
  for (std::size_t i = 0; i < j.array.size(); ++i) {
    collect_datasources(j.array[i], path + "[" + std::to_string(i) + "]", out);
  }
}

void collect_strings(const Json& j, std::vector<std::string>& out) {
  if (j.type == Json::Type::kString) out.push_back(j.string);
  for (const auto& [k, v] : j.object) collect_strings(v, out);
  for (const Json& v : j.array) collect_strings(v, out);
}

// Runs a shell command; exit status and combined output.
std::pair<int, std::string> run_command(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) out += buf.data();
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

TEST_CASE("Dashboards: four dashboards with stable uids that import anywhere", "[dashboards]") {
  const auto files = dashboard_files();
  REQUIRE(files.size() == kUids.size());
  std::set<std::string> uids;
  for (const std::string& file : files) {
    INFO(file);
    const Json d = JsonReader(read_text(file)).parse();
    const std::string uid = d["uid"].str();
    CHECK(kUids.count(uid) == 1);
    CHECK(uids.insert(uid).second);
    CHECK(std::filesystem::path(file).stem() == uid);  // file name = uid: easy to find
    CHECK(!d["title"].str().empty());
    CHECK(d["schemaVersion"].number >= 36);
    CHECK(d["schemaVersion"].number <= 39);
    CHECK(d["id"].is_null());  // an exported id would clash on import
    const auto& tags = d["tags"].array;
    CHECK(std::any_of(tags.begin(), tags.end(),
                      [](const Json& t) { return t.str() == "infiniband"; }));

    // __inputs: the import dialog asks for a Prometheus data source.
    const auto& inputs = d["__inputs"].array;
    CHECK(std::any_of(inputs.begin(), inputs.end(), [](const Json& i) {
      return i["type"].str() == "datasource" && i["pluginId"].str() == "prometheus";
    }));

    // Links to the other two dashboards, keeping the data source.
    std::set<std::string> linked;
    std::vector<std::string> strings;
    collect_strings(d, strings);
    const std::regex dash_url(R"(/d/([a-z0-9-]+)/)");
    for (const std::string& s : strings) {
      for (auto it = std::sregex_iterator(s.begin(), s.end(), dash_url);
           it != std::sregex_iterator(); ++it) {
        INFO("link " << s);
        CHECK(kUids.count((*it)[1]) == 1);
        CHECK(s.find("${DS_PROMETHEUS:queryparam}") != std::string::npos);
        // The drill-down is keyed on the node GUID: switches without a
        // node-name-map share one description.
        if ((*it)[1] == "ibfx-drilldown" && s.find("var-node=") != std::string::npos) {
          CHECK(std::regex_search(
              s,
              std::regex(R"(var-node=\$\{__(data\.fields|field\.labels)\.(remote_)?node_guid\})")));
        }
        linked.insert((*it)[1]);
      }
    }
    for (const std::string& other : kUids) {
      if (other != uid) CHECK(linked.count(other) == 1);
    }
  }
}

TEST_CASE("Dashboards: template variables chain tier -> rail -> switch from label_values",
          "[dashboards]") {
  for (const std::string& file : dashboard_files()) {
    INFO(file);
    const Json d = JsonReader(read_text(file)).parse();
    const auto& vars = d["templating"]["list"].array;
    REQUIRE(vars.size() >= 2);
    // The data source variable comes first: the others query through it.
    CHECK(vars[0]["name"].str() == "DS_PROMETHEUS");
    CHECK(vars[0]["type"].str() == "datasource");
    CHECK(vars[0]["query"].str() == "prometheus");
    if (d["uid"].str() == "ibfx-jobs") {
      // The jobs dashboard is keyed on one Slurm job, not on the fabric's
      // tiers: its one variable is the job id of infiniband_job_info.
      REQUIRE(vars.size() == 2);
      CHECK(vars[1]["name"].str() == "job_id");
      CHECK(vars[1]["type"].str() == "query");
      CHECK(is_datasource_ref(vars[1]["datasource"]));
      CHECK(vars[1]["query"].str() == "label_values(infiniband_job_info, job_id)");
      CHECK(vars[1]["definition"].str() == vars[1]["query"].str());
      continue;
    }
    REQUIRE(vars.size() >= 4);
    std::vector<std::string> names;
    for (std::size_t i = 1; i < vars.size(); ++i) {
      const Json& v = vars[i];
      INFO("variable " << v["name"].str());
      CHECK(v["type"].str() == "query");
      CHECK(is_datasource_ref(v["datasource"]));
      const std::string q = v["query"].str();
      if (v["name"].str() == "node") {
        // Keyed on the GUID, shown by name: the values and texts come from
        // one query's labels.
        CHECK(std::regex_match(q, std::regex(R"(query_result\(infiniband_node_info\{.*\}\))")));
        CHECK(v["regex"].str().find("node_guid=\"(?<value>") != std::string::npos);
        CHECK(v["regex"].str().find("node_name=\"(?<text>") != std::string::npos);
      } else {
        CHECK(std::regex_match(q, std::regex(R"(label_values\(.+, *[a-z_]+\))")));
      }
      CHECK(v["definition"].str() == q);
      // "All" must match series with an empty label (spines have rail="").
      if (v["includeAll"].boolean) CHECK(v["allValue"].str() == ".*");
      // Chained: each variable narrows by the one before it (the switch or
      // node by tier too; a port by its node alone, which fixes both).
      if (!names.empty()) CHECK(q.find("$" + names.back()) != std::string::npos);
      if (names.size() == 2) CHECK(q.find("$" + names.front()) != std::string::npos);
      names.push_back(v["name"].str());
    }
    CHECK(names.size() >= 3);
    CHECK(names[0] == "tier");
    CHECK(names[1] == "rail");
    CHECK((names[2] == "switch" || names[2] == "node"));
  }
}

TEST_CASE("Dashboards: unique ids, non-overlapping grid, data source variable everywhere",
          "[dashboards]") {
  for (const std::string& file : dashboard_files()) {
    INFO(file);
    const Json d = JsonReader(read_text(file)).parse();
    std::vector<const Json*> panels;
    collect_panels(d["panels"], panels);
    REQUIRE(panels.size() > 5);

    std::set<double> ids;
    struct Box {
      int x, y, w, h;
      std::string title;
    };
    std::vector<Box> boxes;
    std::set<std::string> defined = {"__rate_interval", "__interval", "__range",         "__all",
                                     "__data",          "__field",    "__url_time_range"};
    for (const Json& v : d["templating"]["list"].array) defined.insert(v["name"].str());

    for (const Json* p : panels) {
      const std::string title = p->find("title") != nullptr ? (*p)["title"].str() : "";
      INFO("panel " << (*p)["id"].number << " \"" << title << "\" (" << (*p)["type"].str() << ")");
      REQUIRE((*p)["id"].type == Json::Type::kNumber);
      CHECK(ids.insert((*p)["id"].number).second);
      const Json& g = (*p)["gridPos"];
      const Box b{static_cast<int>(g["x"].number), static_cast<int>(g["y"].number),
                  static_cast<int>(g["w"].number), static_cast<int>(g["h"].number), title};
      CHECK(b.w > 0);
      CHECK(b.h > 0);
      CHECK(b.x >= 0);
      CHECK(b.y >= 0);
      CHECK(b.x + b.w <= 24);
      for (const Box& o : boxes) {
        INFO("overlaps \"" << o.title << "\"");
        CHECK_FALSE((b.x < o.x + o.w && o.x < b.x + b.w && b.y < o.y + o.h && o.y < b.y + b.h));
      }
      boxes.push_back(b);
      if ((*p)["type"].str() == "row") continue;

      CHECK(!title.empty());
      CHECK(!(*p)["description"].str().empty());
      CHECK(is_datasource_ref((*p)["datasource"]));
      const auto& targets = (*p)["targets"].array;
      REQUIRE(!targets.empty());
      std::set<std::string> refs;
      for (const Json& t : targets) {
        CHECK(is_datasource_ref(t["datasource"]));
        CHECK(refs.insert(t["refId"].str()).second);
        const std::string expr = t["expr"].str();
        CHECK(!expr.empty());
        // Every $variable is one the dashboard defines or a Grafana built-in.
        const std::regex var(R"(\$\{?([A-Za-z_][A-Za-z0-9_]*))");
        for (auto it = std::sregex_iterator(expr.begin(), expr.end(), var);
             it != std::sregex_iterator(); ++it) {
          INFO("variable $" << (*it)[1]);
          CHECK(defined.count((*it)[1]) == 1);
        }
      }
      if (const std::string repeat = (*p)["repeat"].str(); !repeat.empty()) {
        CHECK(defined.count(repeat) == 1);
      }

      // Units and thresholds set; stall ratios on a fixed 0-100 % scale.
      const Json& defaults = (*p)["fieldConfig"]["defaults"];
      const std::string unit = defaults["unit"].str();
      CHECK(!unit.empty());
      // Heatmaps colour by their fixed scale (below), the rest by thresholds.
      if ((*p)["type"].str() != "heatmap") {
        const auto& steps = defaults["thresholds"]["steps"].array;
        CHECK(!steps.empty());
        if (!steps.empty()) CHECK(steps[0]["value"].is_null());
      }
      // Stall ratios: the thresholds step to red where the heatmaps are red.
      const std::string exprs = [&] {
        std::string all;
        for (const Json& t : targets) all += t["expr"].str();
        return all;
      }();
      if ((*p)["type"].str() != "heatmap" && exprs.find("stall_ratio") != std::string::npos &&
          unit == "percentunit") {
        const auto& steps = defaults["thresholds"]["steps"].array;
        REQUIRE(!steps.empty());
        CHECK(steps.back()["color"].str() == "red");
        CHECK(steps.back()["value"].number == kStallRed);
      }
      if (unit == "percentunit") {
        CHECK(defaults["min"].number == 0);
        CHECK(defaults["max"].number == 1);
        CHECK(defaults["min"].type == Json::Type::kNumber);
        CHECK(defaults["max"].type == Json::Type::kNumber);
      }
      if ((*p)["type"].str() == "heatmap") {
        const Json& color = (*p)["options"]["color"];
        CHECK(color["mode"].str() == "scheme");
        CHECK(color["min"].type == Json::Type::kNumber);
        CHECK(color["max"].type == Json::Type::kNumber);
        if ((*p)["options"]["cellValues"]["unit"].str() == "percentunit") {
          CHECK(color["min"].number == 0);
          if (color["scheme"].str() == "RdYlGn") {
            // A stall-ratio grid: the thresholds' scale, and a healthy (zero)
            // cell is drawn green rather than filtered out as empty.
            CHECK(color["max"].number == kStallRed);
            CHECK(color["reverse"].boolean);
            CHECK((*p)["options"]["filterValues"]["le"].number < 0);
          } else {
            CHECK(color["max"].number == 1);
          }
        }
        CHECK((*p)["options"]["calculate"].type == Json::Type::kBool);
      }
    }

    // No hard-coded data source uid anywhere (the built-in annotation query
    // is Grafana's own, not a data source of this installation).
    std::vector<std::pair<std::string, const Json*>> refs;
    collect_datasources(d, "", refs);
    for (const auto& [path, ds] : refs) {
      INFO(path);
      if (path.rfind(".annotations", 0) == 0 && (*ds)["type"].str() == "grafana") continue;
      CHECK(is_datasource_ref(*ds));
    }
  }
}

TEST_CASE("Dashboards: every recorded series a panel reads is defined by the rules",
          "[dashboards]") {
  const YAML::Node rules = YAML::LoadFile(kDir + "/rules/ibfabric_exporter.rules.yaml");
  std::set<std::string> recorded;
  for (const auto& group : rules["groups"]) {
    for (const auto& rule : group["rules"]) {
      if (rule["record"]) recorded.insert(rule["record"].as<std::string>());
    }
  }
  REQUIRE(!recorded.empty());
  std::set<std::string> used;
  const std::regex recorded_name(R"([a-z_]+:[a-z_]+:[a-z0-9_]+)");
  for (const std::string& file : dashboard_files()) {
    const Json d = JsonReader(read_text(file)).parse();
    std::vector<const Json*> panels;
    collect_panels(d["panels"], panels);
    for (const Json* p : panels) {
      for (const Json& t : (*p)["targets"].array) {
        const std::string expr = t["expr"].str();
        for (auto it = std::sregex_iterator(expr.begin(), expr.end(), recorded_name);
             it != std::sregex_iterator(); ++it) {
          INFO(file << ": " << expr);
          CHECK(recorded.count(it->str()) == 1);
          used.insert(it->str());
        }
      }
    }
  }
  CHECK(!used.empty());
}

TEST_CASE("Dashboards: Grafana provisioning and the sample Prometheus config are valid",
          "[dashboards]") {
  const YAML::Node dashboards = YAML::LoadFile(kDir + "/provisioning/dashboards.yaml");
  CHECK(dashboards["apiVersion"].as<int>() == 1);
  REQUIRE(dashboards["providers"].size() == 1);
  CHECK(dashboards["providers"][0]["type"].as<std::string>() == "file");
  CHECK(!dashboards["providers"][0]["options"]["path"].as<std::string>().empty());
  const YAML::Node datasources = YAML::LoadFile(kDir + "/provisioning/datasources.yaml");
  CHECK(datasources["datasources"][0]["type"].as<std::string>() == "prometheus");

  // promtool checks the sample config once its rule file path is real.
  std::string config = read_text(kDir + "/provisioning/prometheus.yml");
  const std::string installed = "/etc/prometheus/rules/ibfabric_exporter.rules.yaml";
  const auto at = config.find(installed);
  REQUIRE(at != std::string::npos);
  config.replace(at, installed.size(), kDir + "/rules/ibfabric_exporter.rules.yaml");
  char tmpl[] = "/tmp/ibfx-promcfg-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string path = std::string(tmpl) + "/prometheus.yml";
  std::ofstream(path) << config;
  const auto [status, out] = run_command("promtool check config " + quote(path));
  std::filesystem::remove_all(tmpl);
  INFO(out);
  CHECK(status == 0);
}

TEST_CASE("Dashboards: the remote-write configs (vmagent, Prometheus agent) are valid",
          "[dashboards]") {
  // vmagent refuses unknown fields (strict parse) and exits non-zero.
  const auto [vm_status, vm_out] =
      run_command("vmagent -dryRun -loggerLevel=ERROR -promscrape.config=" +
                  quote(kDir + "/provisioning/vmagent.yml"));
  INFO(vm_out);
  CHECK(vm_status == 0);
  const auto [agent_status, agent_out] = run_command(
      "promtool check config --agent " + quote(kDir + "/provisioning/prometheus-agent.yml"));
  INFO(agent_out);
  CHECK(agent_status == 0);
  // Both keep the two-cadence layout of docs/scale-out.md: each group in
  // one job, aggregates in job "infiniband" (the rules' `up` alerts).
  for (const char* file : {"vmagent.yml", "prometheus-agent.yml"}) {
    INFO(file);
    const YAML::Node config = YAML::LoadFile(kDir + "/provisioning/" + file);
    std::map<std::string, std::string> job_of_group;
    for (const auto& job : config["scrape_configs"]) {
      for (const auto& group : job["params"]["collect[]"]) {
        const auto [it, inserted] =
            job_of_group.emplace(group.as<std::string>(), job["job_name"].as<std::string>());
        CHECK(inserted);
      }
    }
    CHECK(job_of_group == std::map<std::string, std::string>{{"aggregates", "infiniband"},
                                                             {"nodes", "infiniband_ports"},
                                                             {"ports", "infiniband_ports"}});
  }
}

TEST_CASE("Rules: the rules load unchanged in vmalert", "[dashboards][rules]") {
  // vmalert parses every expression with its MetricsQL parser and exits
  // non-zero on the first it refuses.
  const auto [status, out] = run_command("vmalert -dryRun -loggerLevel=ERROR -rule=" +
                                         quote(kDir + "/rules/ibfabric_exporter.rules.yaml"));
  INFO(out);
  CHECK(status == 0);
}

TEST_CASE("Rules: promtool check rules is clean", "[dashboards][rules]") {
  const auto [status, out] =
      run_command("promtool check rules " + quote(kDir + "/rules/ibfabric_exporter.rules.yaml"));
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("SUCCESS") != std::string::npos);
  CHECK(out.find("WARNING") == std::string::npos);
}

TEST_CASE("Rules: promtool unit tests pass and cover every alert both ways",
          "[dashboards][rules]") {
  const std::string tests = kDir + "/rules/ibfabric_exporter.rules.test.yaml";
  const auto [status, out] = run_command("promtool test rules " + quote(tests));
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("SUCCESS") != std::string::npos);

  // Every alert has a case where it fires and one where it must stay quiet,
  // and every alert has a runbook.
  const YAML::Node rules = YAML::LoadFile(kDir + "/rules/ibfabric_exporter.rules.yaml");
  std::set<std::string> alerts;
  for (const auto& group : rules["groups"]) {
    for (const auto& rule : group["rules"]) {
      if (!rule["alert"]) continue;
      const std::string name = rule["alert"].as<std::string>();
      INFO(name);
      alerts.insert(name);
      CHECK(rule["annotations"]["runbook"].as<std::string>().size() > 100);
      CHECK(!rule["annotations"]["summary"].as<std::string>().empty());
      CHECK(rule["labels"]["severity"].IsDefined());
    }
  }
  CHECK(alerts.size() >= 8);
  std::set<std::string> fires, quiet;
  const YAML::Node t = YAML::LoadFile(tests);
  for (const auto& test : t["tests"]) {
    for (const auto& eval : test["alert_rule_test"]) {
      const std::string name = eval["alertname"].as<std::string>();
      (eval["exp_alerts"].size() > 0 ? fires : quiet).insert(name);
    }
  }
  for (const std::string& a : alerts) {
    INFO(a);
    CHECK(fires.count(a) == 1);
    CHECK(quiet.count(a) == 1);
  }
}
