// A real server program of the monitoring stack (Prometheus, and
// VictoriaMetrics' victoria-metrics, vmagent and vmalert from Debian's
// victoria-metrics package) on a loopback port, in a temp dir of its own,
// torn down by the destructor (and by PR_SET_PDEATHSIG, which Process sets,
// if the test dies). Shared by the dashboards test, the Slurm jobs test and
// the remote-write tests.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon_fixture.h"
#include "test/support/mini_json.h"

namespace ibfx::test {

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

// An ephemeral port nobody listens on right now. The programs take an
// explicit address, so the (small) race is handled by retrying the start.
inline int free_port() {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

// Every occurrence of `from` in `text` replaced by `to`; throws when there
// is none, so a shipped file that changed shape fails the test that adapts
// it instead of being run unadapted.
inline std::string replace_every(std::string text, const std::string& from, const std::string& to) {
  std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("\"" + from + "\" not found in:\n" + text);
  for (; at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

class LoopbackService {
 public:
  // Creates the temp dir (dir()), where the caller writes the program's
  // configuration before start().
  explicit LoopbackService(std::string name) : name_(std::move(name)) {
    std::string tmpl = "/tmp/ibfx-" + name_ + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  virtual ~LoopbackService() {
    if (process_) process_->terminate(std::chrono::milliseconds(3000));
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  LoopbackService(const LoopbackService&) = delete;
  LoopbackService& operator=(const LoopbackService&) = delete;
  LoopbackService(LoopbackService&&) = delete;
  LoopbackService& operator=(LoopbackService&&) = delete;

  // Starts argv ("{port}" in any argument is replaced by the port chosen)
  // and waits until GET `ready_path` answers 200; throws with the log if it
  // never does.
  void start(const std::vector<std::string>& argv, const std::string& ready_path) {
    for (int attempt = 0; attempt < 3 && port_ == 0; ++attempt) {
      const int port = free_port();
      Process::Spec spec;
      for (const std::string& a : argv) {
        spec.argv.push_back(a.find("{port}") == std::string::npos
                                ? a
                                : replace_every(a, "{port}", std::to_string(port)));
      }
      spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", dir_}};
      spec.cwd = dir_;
      spec.stdout_path = dir_ + "/stdout.log";
      spec.stderr_path = dir_ + "/stderr.log";
      if (process_) process_->terminate(std::chrono::milliseconds(1000));
      process_.emplace(Process::start(spec));
      const bool ready = eventually(
          [&] {
            if (!process_->running()) return true;
            try {
              return http_get(port, ready_path).status == 200;
            } catch (const std::exception&) {
              return false;
            }
          },
          std::chrono::seconds(20));
      if (ready && process_->running()) port_ = port;
    }
    if (port_ == 0) throw std::runtime_error(name_ + " did not start: " + log());
  }

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  const std::string& name() const { return name_; }
  // Both streams: Prometheus logs to stderr, the VictoriaMetrics programs to
  // stderr or stdout depending on the version.
  std::string log() const {
    return process_ ? process_->read_stderr() + process_->read_stdout() : std::string();
  }

 private:
  std::string name_;
  std::string dir_;
  std::optional<Process> process_;
  int port_ = 0;
};

// The query API Prometheus, victoria-metrics and vmalert share
// (/api/v1/query, /api/v1/label/NAME/values, /api/v1/rules, ...).
class QueryService : public LoopbackService {
 public:
  using LoopbackService::LoopbackService;

  // GET an API path; the reply's JSON (status "success" or not).
  Json api(const std::string& path_and_query) const {
    const HttpReply r = http_get(port(), path_and_query);
    return parse_json(r.body);
  }
  Json query(const std::string& promql) const {
    return api("/api/v1/query?query=" + url_encode(promql));
  }
  // At a given Unix time, so that two stores answer about the same instant.
  Json query_at(const std::string& promql, double unix_seconds) const {
    return api("/api/v1/query?query=" + url_encode(promql) +
               "&time=" + std::to_string(unix_seconds));
  }
  std::vector<std::string> label_values(const std::string& label,
                                        const std::string& selector) const {
    const Json j = api("/api/v1/label/" + label + "/values?match[]=" + url_encode(selector));
    std::vector<std::string> out;
    for (const Json& v : j["data"].array) out.push_back(v.str());
    return out;
  }
  // One line per scrape target: its health, last scrape and last error
  // (Prometheus and vmagent serve the same /api/v1/targets).
  std::string targets() const {
    std::string out;
    const Json t = api("/api/v1/targets");
    for (const Json& a : t["data"]["activeTargets"].array) {
      out += name() + " target " + a["scrapeUrl"].str() + ": health " + a["health"].str() +
             ", last scrape " + a["lastScrape"].str() + ", error \"" + a["lastError"].str() +
             "\"\n";
    }
    return out;
  }
};

}  // namespace ibfx::test
