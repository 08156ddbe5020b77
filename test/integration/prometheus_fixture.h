// A real Prometheus (Debian's /usr/bin/prometheus) scraping the daemon, as a
// server or in agent mode, and what the dashboard checks need around it:
// the samples of a query's reply and Grafana's template expansion (queries
// and label values: loopback_service.h). Shared by the dashboards test, the
// Slurm jobs test (dashboards/ibfx-jobs.json) and the remote-write tests.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon_fixture.h"
#include "loopback_service.h"
#include "test/support/mini_json.h"

namespace ibfx::test {

// ---------------------------------------------------------------------------
// Prometheus on loopback (loopback_service.h).

class Prometheus : public QueryService {
 public:
  enum class Mode { kServer, kAgent };  // --enable-feature=agent: scrape and remote-write only
  // One job, "infiniband", scraping the daemon every second, with `rules_file`.
  Prometheus(int target_port, const std::string& rules_file)
      : Prometheus(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "rule_files:\n  - " +
                rules_file +
                "\n"
                "scrape_configs:\n  - job_name: infiniband\n"
                "    static_configs:\n      - targets: ['127.0.0.1:" +
                std::to_string(target_port) + "']\n",
            Mode::kServer) {}
  // Any configuration (prometheus.yml's text).
  Prometheus(const std::string& config, Mode mode) : QueryService("prometheus") {
    const std::string path = dir() + "/prometheus.yml";
    std::ofstream(path) << config;
    std::vector<std::string> argv = {"/usr/bin/prometheus", "--config.file=" + path,
                                     "--web.listen-address=127.0.0.1:{port}", "--log.level=warn"};
    if (mode == Mode::kAgent) {
      argv.insert(argv.end(), {"--enable-feature=agent", "--storage.agent.path=" + dir() + "/wal"});
    } else {
      argv.push_back("--storage.tsdb.path=" + dir() + "/data");
    }
    start(argv, "/-/ready");
  }
};

// One sample of a query result: its labels and value.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Samples of an instant query's reply (vector or scalar).
inline std::vector<Sample> samples(const Json& reply) {
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
inline std::string expand(const std::string& text, const std::map<std::string, std::string>& vars) {
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
inline std::pair<std::string, std::string> parse_label_values(const std::string& q) {
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

}  // namespace ibfx::test
