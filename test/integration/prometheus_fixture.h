// A real Prometheus (Debian's /usr/bin/prometheus) scraping one daemon, and
// what the dashboard checks need around it: instant queries and their
// samples, label values, and Grafana's template expansion. Shared by the
// dashboards test and the Slurm jobs test (dashboards/ibfx-jobs.json).
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
#include "test/support/mini_json.h"

namespace ibfx::test {

// ---------------------------------------------------------------------------
// Prometheus on loopback, in its own temp dir, torn down by the destructor
// (and by PR_SET_PDEATHSIG, which Process sets, if the test dies).

inline std::string url_encode(std::string_view s) {
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
inline int free_port() {
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
  // One line per target: its health, last scrape and last error.
  std::string targets() const {
    std::ostringstream out;
    const Json t = api("/api/v1/targets");
    for (const Json& a : t["data"]["activeTargets"].array) {
      out << "prometheus target " << a["scrapeUrl"].str() << ": health " << a["health"].str()
          << ", last scrape " << a["lastScrape"].str() << " took " << a["lastScrapeDuration"].number
          << " s, error \"" << a["lastError"].str() << "\"\n";
    }
    return out.str();
  }
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
