// Runs the real daemon on a SimFabric and talks to it over HTTP.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test/sim/sim_fabric.h"
#include "test/support/config_yaml.h"

namespace ibfx::test {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// A minimal HTTP/1.0 client: one request, read to EOF.
inline HttpReply http_get(int port, const std::string& path,
                          const std::vector<std::string>& extra_headers = {},
                          const std::string& method = "GET") {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket sock(io);
  sock.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  std::string req = method + " " + path + " HTTP/1.0\r\nHost: localhost\r\n";
  for (const auto& h : extra_headers) req += h + "\r\n";
  req += "\r\n";
  asio::write(sock, asio::buffer(req));
  std::string raw;
  boost::system::error_code ec;
  char buf[65536];
  for (;;) {
    const std::size_t n = sock.read_some(asio::buffer(buf), ec);
    raw.append(buf, n);
    if (ec) break;
  }
  HttpReply r;
  const auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos)
    throw std::runtime_error("malformed HTTP reply: " + raw.substr(0, 200));
  std::istringstream head(raw.substr(0, end));
  std::string line;
  std::getline(head, line);
  r.status = std::stoi(line.substr(line.find(' ') + 1, 3));
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
  }
  r.body = raw.substr(end + 4);
  return r;
}

// "name{labels}" -> value, exactly as the exposition prints the series.
using Series = std::map<std::string, double>;
inline Series parse_exposition(const std::string& text) {
  Series s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    s[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return s;
}

// Per-port series carry node_guid and port only (the lean exposition); the
// name and type stay in the signature for the callers' readability.
inline std::string port_labels(const std::string& guid, const std::string& /*name*/,
                               const std::string& /*type*/, int port) {
  return "{node_guid=\"" + guid + "\",port=\"" + std::to_string(port) + "\"";
}

// The value of the first series whose key starts with `prefix` (a family
// name and a leading part of its labels, e.g. from port_labels()); labels
// after the prefix (tier, rail) are not compared. Throws if absent.
inline double value(const Series& s, const std::string& prefix) {
  for (auto it = s.lower_bound(prefix); it != s.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const char next = it->first.size() > prefix.size() ? it->first[prefix.size()] : '\0';
    if (next == ',' || next == '}' || next == '\0') return it->second;
  }
  throw std::out_of_range("no series " + prefix);
}

// Waits for `pred` to hold, polling every 100 ms; false on timeout.
inline bool eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The daemon under test, serving on an ephemeral port.
class Daemon {
 public:
  Daemon(SimFabric& sim, std::vector<std::string> extra_args = {}) {
    std::vector<std::string> argv = {IBFX_DAEMON_PATH, "--web.listen-address=127.0.0.1:0",
                                     "--log.level=debug"};
    bool has_interval = false;
    bool has_state = false;
    for (const auto& a : extra_args) {
      has_interval = has_interval || a.rfind("--sweep.interval", 0) == 0;
      has_state = has_state || a.rfind("--state.directory", 0) == 0;
    }
    if (!has_interval) argv.push_back("--sweep.interval=1s");
    // The simulator's temp dir, shared by the daemons a test runs one after
    // the other on it (a restart keeps its events), never /var/lib.
    if (!has_state) argv.push_back("--state.directory=" + sim.dir() + "/state");
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    process_ = &sim.spawn(argv);
    const std::regex listening(R"(listening on .* \(port ([0-9]+)\))");
    const bool up = eventually([&] {
      std::smatch m;
      const std::string err = process_->read_stderr();
      if (std::regex_search(err, m, listening)) port_ = std::stoi(m[1]);
      return port_ != 0 || !process_->running();
    });
    if (!up || port_ == 0) {
      throw std::runtime_error("daemon did not start: " + process_->read_stderr());
    }
  }
  int port() const { return port_; }
  Process& process() { return *process_; }
  bool wait_ready(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return eventually([&] { return http_get(port_, "/-/ready").status == 200; }, timeout);
  }
  std::string metrics() { return http_get(port_, "/metrics").body; }
  Series series() { return parse_exposition(metrics()); }
  // Polls /metrics until `key` has `value` (sweeps run every second).
  bool wait_value(const std::string& key, double expected,
                  std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return eventually(
        [&] {
          try {
            return ibfx::test::value(series(), key) == expected;
          } catch (const std::out_of_range&) {
            return false;
          }
        },
        timeout);
  }
  bool wait_value_at_least(const std::string& key, double minimum,
                           std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return eventually(
        [&] {
          try {
            return ibfx::test::value(series(), key) >= minimum;
          } catch (const std::out_of_range&) {
            return false;
          }
        },
        timeout);
  }

 private:
  Process* process_ = nullptr;
  int port_ = 0;
};

}  // namespace ibfx::test

namespace ibfx::test {
// The node_guid label of the node named `name` in infiniband_node_info.
inline std::string guid_of(const Series& s, const std::string& name) {
  const std::regex re("infiniband_node_info\\{node_guid=\"(0x[0-9a-f]{16})\",node_name=\"" + name +
                      "\",.*");
  for (const auto& [key, value] : s) {
    std::smatch m;
    if (std::regex_match(key, m, re)) return m[1];
  }
  return {};
}
inline std::size_t count_family(const Series& s, const std::string& family) {
  std::size_t n = 0;
  for (const auto& [key, value] : s) n += key.rfind(family + "{", 0) == 0 ? 1 : 0;
  return n;
}
// A config file in the simulator's directory with `yaml` in it; returns the
// flag that hands it to the daemon.
inline std::string config_flag(SimFabric& sim, const std::string& yaml,
                               const std::string& name = "exporter.yaml") {
  const std::string path = sim.dir() + "/" + name;
  std::ofstream(path) << yaml;
  return "--config.file=" + path;
}
// The raw PortXmitWait counts (infiniband_port_transmit_wait_total) are
// opt-in; tests that compare them with what PerformanceSet or perfquery
// said turn them on.
inline const std::string kRawWaitYaml = ConfigYaml().raw_transmit_wait().str();
// PortPhysicalState 5 (LinkUp, IBA 14.2.5.6 PortInfo): the link is up. The
// lean exposition has no port_up: it is derived from this gauge.
inline constexpr double kPhysLinkUp = 5;
// Value of a perfquery field ("PortXmitWait:.......1234").
inline std::uint64_t perfquery_field(const std::string& out, const std::string& field) {
  const std::regex re(field + ":\\.+([0-9]+)");
  std::smatch m;
  if (!std::regex_search(out, m, re)) throw std::runtime_error("no " + field + " in: " + out);
  return std::stoull(m[1]);
}
}  // namespace ibfx::test
