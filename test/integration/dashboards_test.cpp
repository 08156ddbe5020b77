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
#include <optional>

#include "daemon_fixture.h"
#include "test/scenario/scenario.h"
#include "test/support/mini_json.h"

using namespace ibfx::test;

namespace {

// ---------------------------------------------------------------------------
// Prometheus on loopback, in its own temp dir, torn down by the destructor
// (and by PR_SET_PDEATHSIG, which Process sets, if the test dies).

std::string url_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

// An ephemeral port nobody listens on right now. Prometheus takes an explicit
// address, so the (small) race is handled by retrying the start.
int free_port() {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

class Prometheus {
 public:
  Prometheus(int target_port, const std::string& rules_file) {
    char tmpl[] = "/tmp/ibfx-prometheus-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    const std::string config = dir_ + "/prometheus.yml";
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                          << "rule_files:\n  - " << rules_file << "\n"
                          << "scrape_configs:\n  - job_name: infiniband\n"
                          << "    static_configs:\n      - targets: ['127.0.0.1:" << target_port
                          << "']\n";
    for (int attempt = 0; attempt < 3 && port_ == 0; ++attempt) {
      const int port = free_port();
      Process::Spec spec;
      spec.argv = {"/usr/bin/prometheus", "--config.file=" + config,
                   "--storage.tsdb.path=" + dir_ + "/data",
                   "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"};
      spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", dir_}};
      spec.cwd = dir_;
      spec.stdout_path = dir_ + "/stdout.log";
      spec.stderr_path = dir_ + "/stderr.log";
      process_.emplace(Process::start(spec));
      const bool ready = eventually(
          [&] {
            if (!process_->running()) return true;
            try {
              return http_get(port, "/-/ready").status == 200;
            } catch (const std::exception&) {
              return false;
            }
          },
          std::chrono::seconds(20));
      if (ready && process_->running()) port_ = port;
    }
    if (port_ == 0) throw std::runtime_error("prometheus did not start: " + log());
  }
  ~Prometheus() {
    if (process_) process_->terminate(std::chrono::milliseconds(3000));
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Prometheus(const Prometheus&) = delete;
  Prometheus& operator=(const Prometheus&) = delete;

  std::string log() const { return process_ ? process_->read_stderr() : std::string(); }
  // GET an API path; the reply's JSON (status "success" or not).
  Json api(const std::string& path_and_query) const {
    const HttpReply r = http_get(port_, path_and_query);
    return parse_json(r.body);
  }
  Json query(const std::string& promql) const {
    return api("/api/v1/query?query=" + url_encode(promql));
  }
  std::vector<std::string> label_values(const std::string& label,
                                        const std::string& selector) const {
    const Json j = api("/api/v1/label/" + label + "/values?match[]=" + url_encode(selector));
    std::vector<std::string> out;
    for (const Json& v : j["data"].array) out.push_back(v.str());
    return out;
  }

 private:
  std::string dir_;
  std::optional<Process> process_;
  int port_ = 0;
};

// One sample of a query result: its labels and value.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Samples of an instant query's reply (vector or scalar).
std::vector<Sample> samples(const Json& reply) {
  std::vector<Sample> out;
  const Json& data = reply["data"];
  auto value_of = [](const Json& pair) {
    return pair.array.size() == 2 ? std::strtod(pair.array[1].string.c_str(), nullptr) : NAN;
  };
  if (data["resultType"].str() == "scalar") {
    out.push_back({{}, value_of(data["result"])});
    return out;
  }
  for (const Json& r : data["result"].array) {
    Sample s;
    for (const auto& [k, v] : r["metric"].object) s.labels[k] = v.str();
    s.value = value_of(r["value"]);
    out.push_back(std::move(s));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Grafana template expansion.

// Replaces $name, ${name} and ${name:format} by vars[name]; unknown names stay.
std::string expand(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    std::size_t j = i + 1;
    const bool braced = j < text.size() && text[j] == '{';
    if (braced) ++j;
    std::size_t k = j;
    while (k < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[k])) != 0 || text[k] == '_'))
      ++k;
    const std::string name = text.substr(j, k - j);
    std::size_t end = k;
    if (braced) {
      end = text.find('}', k);
      if (end == std::string::npos) end = k - 1;
      ++end;
    }
    auto it = vars.find(name);
    if (name.empty() || it == vars.end()) {
      out += text.substr(i, end - i);
    } else {
      out += it->second;
    }
    i = end;
  }
  return out;
}

// label_values(selector, label) -> (selector, label).
std::pair<std::string, std::string> parse_label_values(const std::string& q) {
  const std::string head = "label_values(";
  REQUIRE(q.rfind(head, 0) == 0);
  REQUIRE(q.back() == ')');
  const std::string inner = q.substr(head.size(), q.size() - head.size() - 1);
  const auto comma = inner.rfind(',');
  REQUIRE(comma != std::string::npos);
  std::string label = inner.substr(comma + 1);
  label.erase(0, label.find_first_not_of(' '));
  return {inner.substr(0, comma), label};
}

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

// The scenario: background training traffic on a small rail-optimized fat
// tree, spine-02 port 3 congested, symbol errors on spine-02 port 1 (so the
// drill-down of spine-02 has errors to show), and gpu0003 mlx5_1's link down
// from t = 4 s (a flap with a long down time).
std::string scenario_yaml() {
  return "name: dashboards\nseed: 11\n"
         "fabric:\n  servers: 8\n  rails: 2\n  tiers: 2\n  radix: 8\n"
         "duration: 600\ntick: 1.0\neffects:\n"
         "  - {type: allreduce, load: 0.5}\n"
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

}  // namespace

TEST_CASE("Every dashboard panel returns sane data from a real Prometheus scraping the daemon",
          "[dashboards][integration]") {
  const std::string source = IBFX_SOURCE_DIR;
  ScenarioDriver driver(parse_scenario(scenario_yaml()));
  SimFabric sim(degraded_netfile(driver.fabric()));
  const std::string config = sim.dir() + "/exporter.yaml";
  // The driver's PortXmitWait tick; frequent discoveries so port states
  // (read at discovery) follow the flap within the test.
  std::ofstream(config) << "scores:\n  tick_seconds: 256e-9\ndiscovery:\n  interval: 2s\n";
  Daemon daemon(sim, {"--config.file=" + config});
  REQUIRE(daemon.wait_ready());
  Prometheus prom(daemon.port(), source + "/dashboards/rules/ibfabric_exporter.rules.yaml");

  // 16 simulated seconds, one per wall second; gpu0007 mlx5_0 stops
  // answering its PMA half-way (ibsim drops every MAD to it).
  for (int i = 0; i < 16; ++i) {
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& line : driver.step()) sim.console(line);
    if (i == 8) sim.error_rate("gpu0007 mlx5_0", 1, 100);
    std::this_thread::sleep_until(start + std::chrono::seconds(1));
  }
  // Recording rules have run on enough samples for every rate window, and
  // Prometheus has scraped the flapped link as down (port states come from
  // discovery, which runs in a child process: slow under the sanitizers).
  REQUIRE(eventually(
      [&] {
        return !samples(prom.query("node_port:infiniband_port_errors:rate5m")).empty() &&
               !samples(prom.query("infiniband_exporter_node_up == 0")).empty() &&
               !samples(
                    prom.query("infiniband_port_up{node_name=\"gpu0003 mlx5_1\",port=\"1\"} == 0 "
                               "or infiniband_port_up{node_name=\"leaf-r1-01\",port=\"3\"} == 0"))
                    .empty();
      },
      std::chrono::seconds(30)));

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
  CHECK(rule_count == 17);

  // Values chosen for the template variables: "All" (allValue) where the
  // variable has it, else the congested switch.
  const std::string culprit = "spine-02";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(source + "/dashboards")) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 3);

  std::size_t queries = 0;
  for (const std::string& file : files) {
    const Json dash = parse_json(read_file(file));
    const std::string uid = dash["uid"].str();
    INFO("dashboard " << uid);
    std::map<std::string, std::string> vars = {
        {"__rate_interval", "10s"}, {"__interval", "1s"}, {"__range", "5m"}};
    std::map<std::string, std::vector<std::string>> real_values;
    for (const Json& v : dash["templating"]["list"].array) {
      if (v["type"].str() != "query") continue;
      const auto [selector, label] = parse_label_values(v["query"].str());
      const std::string expanded = expand(selector, vars);
      INFO("variable " << v["name"].str() << ": label_values(" << expanded << ", " << label << ")");
      const auto values = prom.label_values(label, expanded);
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
          CHECK(!result.empty());
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
        CHECK(has(culprit, port_level ? "3" : ""));
        if (lower.rfind("top", 0) == 0) {  // the top-N panels rank it first
          const auto top =
              std::max_element(all.begin(), all.end(),
                               [](const Sample& a, const Sample& b) { return a.value < b.value; });
          REQUIRE(top != all.end());
          CHECK(top->labels["node_name"] == culprit);
          CHECK(top->labels["port"] == "3");
          if (lower.find("stalled") != std::string::npos) {
            CHECK(top->labels["remote_node_name"] == "leaf-r1-01");
          }
        }
      }
      if (panel["type"].str() == "table") {
        std::string listing;
        for (const Sample& s : all) listing += describe(s) + "\n";
        INFO(listing);
        // Either end of the cable: an HCA whose only link is down may drop
        // out of the next discovery, its leaf's port stays.
        if (title == "Ports down") CHECK((has("gpu0003 mlx5_1", "1") || has("leaf-r1-01", "3")));
        if (title == "Links below the fabric's norm") CHECK(has("gpu0005 mlx5_0", "1"));
        if (title == "Nodes not answering") CHECK(has("gpu0007 mlx5_0", ""));
        if (title == "Ports with errors") CHECK(has(culprit, "1"));
      }
    }
  }
  CHECK(queries > 40);
}
