// Issue #18: scrapes keep being served under a connection flood. The daemon
// on a simulated fabric is flooded over loopback with connections that never
// send a byte and connections that trickle half a request (or half a TLS
// record), and 50 concurrent scrapes (one curl --parallel) must all succeed,
// promptly, while the daemon's descriptors and memory stay bounded and come
// back once the flood is gone. Each test prints its figures (the source of
// docs/benchmarks.md); IBFX_FLOOD_IDLE / IBFX_FLOOD_SLOW override the flood's
// size. The uncapped server under the same flood: test/unit/http_server_test.cpp.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "shell.h"
#include "test/support/sanitized.h"

using namespace ibfx::test;
using namespace std::chrono_literals;


namespace {

std::size_t env_count(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::stoul(text) : fallback;
}

// The daemon's open descriptors and resident memory, from /proc.
std::size_t descriptors_of(pid_t pid) {
  std::size_t n = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end;
       !ec && it != end; it.increment(ec)) {
    ++n;
  }
  return n;
}

std::size_t rss_kib_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  }
  return 0;
}

// Loopback connections that hold a slot: `idle` never send anything, `slow`
// send `prefix` and then one more byte of `trickle` every 500 ms, never
// finishing. A background thread does the trickling until stop() (or the
// destructor), so the flood always ends with the test.
class Flood {
 public:
  Flood(int port, std::size_t idle, std::size_t slow, std::string prefix, char trickle)
      : prefix_(std::move(prefix)), trickle_(trickle) {
    for (std::size_t i = 0; i < idle + slow; ++i) {
      const int fd = connect_to(port);
      if (fd < 0) continue;
      (i < idle ? idle_ : slow_).push_back(fd);
    }
    for (const int fd : slow_) send_some(fd, prefix_);
    thread_ = std::thread([this] {
      while (!stopping_.load()) {
        for (const int fd : slow_) send_some(fd, std::string(1, trickle_));
        for (int i = 0; i < 10 && !stopping_.load(); ++i) std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~Flood() { stop(); }
  Flood(const Flood&) = delete;
  Flood& operator=(const Flood&) = delete;

  std::size_t opened() const { return idle_.size() + slow_.size(); }

  // How many of the flood's connections the server still holds open (it has
  // neither closed nor reset them).
  std::size_t held() const {
    std::vector<pollfd> fds;
    for (const int fd : idle_) fds.push_back({fd, POLLIN | POLLRDHUP, 0});
    for (const int fd : slow_) fds.push_back({fd, POLLIN | POLLRDHUP, 0});
    ::poll(fds.data(), fds.size(), 0);
    return static_cast<std::size_t>(std::count_if(fds.begin(), fds.end(), [](const pollfd& p) {
      return (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) == 0;
    }));
  }

  void stop() {
    stopping_.store(true);
    if (thread_.joinable()) thread_.join();
    for (const int fd : idle_) ::close(fd);
    for (const int fd : slow_) ::close(fd);
    idle_.clear();
    slow_.clear();
  }

 private:
  static int connect_to(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  static void send_some(int fd, const std::string& bytes) {
    // The server may have closed it already: no SIGPIPE, errors ignored.
    [[maybe_unused]] const auto n =
        ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  std::string prefix_;
  char trickle_;
  std::vector<int> idle_;
  std::vector<int> slow_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

struct Scrapes {
  std::size_t ok = 0;
  std::size_t total = 0;
  double max_seconds = 0;
  double median_seconds = 0;
  std::string output;
};

// `count` scrapes of /metrics at once, from one curl process: each transfer
// its own HTTP/1.1 connection, all opened immediately.
Scrapes scrape_concurrently(const std::string& url, const std::string& curl_options,
                            std::size_t count) {
  std::string command = "curl -sS --parallel --parallel-immediate --parallel-max " +
                        std::to_string(count) + " --max-time 20 " + curl_options +
                        " -w '%{http_code} %{time_total}\\n'";
  for (std::size_t i = 0; i < count; ++i) command += " -o /dev/null '" + url + "'";
  Scrapes result;
  // stderr dropped: in --parallel mode curl 7.88 draws its progress meter
  // there even with -s.
  const Shell run = shell(command + " 2>/dev/null");
  result.output = run.out;
  std::istringstream lines(run.out);
  std::vector<double> times;
  std::string code;
  double seconds = 0;
  while (lines >> code >> seconds) {
    ++result.total;
    if (code == "200") ++result.ok;
    times.push_back(seconds);
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    result.max_seconds = times.back();
    result.median_seconds = times[times.size() / 2];
  }
  return result;
}

// The test process holds the flood's descriptors itself.
void raise_own_descriptor_limit() {
  rlimit nofile{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &nofile) == 0);
  nofile.rlim_cur = nofile.rlim_max;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &nofile) == 0);
}

struct Figures {
  std::string name;
  std::size_t flood = 0;
  std::size_t held = 0;
  std::size_t fds_before = 0, fds_flood = 0, fds_after = 0;
  std::size_t rss_before = 0, rss_flood = 0, rss_after = 0;
  Scrapes scrapes;
};

void print(const Figures& f) {
  std::cout << "flood figures [" << f.name << "]: " << f.flood << " flood connections, " << f.held
            << " held by the daemon during the scrapes; 50 concurrent scrapes: " << f.scrapes.ok
            << "/" << f.scrapes.total << " ok, median " << f.scrapes.median_seconds * 1000
            << " ms, max " << f.scrapes.max_seconds * 1000 << " ms; daemon descriptors "
            << f.fds_before << " -> " << f.fds_flood << " -> " << f.fds_after << ", RSS "
            << f.rss_before / 1024 << " -> " << f.rss_flood / 1024 << " -> " << f.rss_after / 1024
            << " MiB (before -> flood -> after)\n";
}

// Runs the whole scenario against a ready daemon; `tls` picks the flood's
// half-finished bytes (a TLS record header instead of half a request line).
Figures flood_and_scrape(const std::string& name, Daemon& daemon, const std::string& url,
                         const std::string& curl_options, bool tls, std::size_t cap,
                         std::chrono::milliseconds settle = 500ms) {
  const pid_t pid = daemon.process().pid();
  Figures f;
  f.name = name;
  // A first scrape so the baseline includes the rendered exposition.
  REQUIRE(scrape_concurrently(url, curl_options, 1).ok == 1);
  f.fds_before = descriptors_of(pid);
  f.rss_before = rss_kib_of(pid);
  {
    const std::size_t idle = env_count("IBFX_FLOOD_IDLE", 1000);
    const std::size_t slow = env_count("IBFX_FLOOD_SLOW", 200);
    Flood flood(daemon.port(), idle, slow,
                tls ? std::string("\x16\x03\x01\x02", 4) : "GET /metrics HTTP/1.1\r\nX-Slow: ",
                tls ? '\0' : 'a');
    f.flood = flood.opened();
    REQUIRE(f.flood == idle + slow);
    std::this_thread::sleep_for(settle);  // the daemon has accepted them all
    f.scrapes = scrape_concurrently(url, curl_options, 50);
    f.held = flood.held();
    f.fds_flood = descriptors_of(pid);
    f.rss_flood = rss_kib_of(pid);
    INFO(f.scrapes.output);
    CHECK(f.scrapes.total == 50);
    CHECK(f.scrapes.ok == 50);
    // Promptly, on a shared 2-core machine; 50 TLS handshakes at once take
    // about a second of CPU there. A sanitizer's build gets twice as long
    // (seen: 6.2 s under ASan on two cores busy with other builds); the
    // release build checks the bound.
    CHECK(f.scrapes.max_seconds < (tls ? 5.0 : 3.0) * (kSanitized ? 2 : 1));
    CHECK(daemon.process().running());
  }
  // The flood has closed its end: the daemon gives every descriptor back.
  CHECK(eventually([&] { return descriptors_of(pid) <= f.fds_before + 2; }, 10s));
  f.fds_after = descriptors_of(pid);
  f.rss_after = rss_kib_of(pid);
  // Memory stays bounded by the connections held (a plain one costs a few
  // KiB, a handshaking TLS one about 100 KiB of OpenSSL and Asio buffers) and
  // is given back once the flood is gone.
  // Not under a sanitizer: ASan and TSan allocate through their own
  // allocators, which hold freed memory in a quarantine and add shadow
  // memory, so the daemon's RSS there says nothing about its own use. The
  // release build checks the bounds.
  if (!kSanitized) {
    const std::size_t held_at_most = std::min(f.flood, cap);
    CHECK(f.rss_flood < f.rss_before + held_at_most * (tls ? 160 : 32));
    CHECK(f.rss_after <= f.rss_before + (f.rss_flood - f.rss_before) / 2 + 4096);
  }
  REQUIRE(scrape_concurrently(url, curl_options, 1).ok == 1);
  print(f);
  return f;
}

}  // namespace

// Under the simulator every process that umad2sim is preloaded into (the
// daemon too: its MAD worker and discovery children inherit the preload) must
// stay below descriptor 1024: umad2sim takes descriptors 1024 and up for its
// simulated umad devices, so its close() never closes them and its ioctl()
// fails on them (ibsim umad2sim/umad2sim.c). These tests therefore cap the
// daemon at kSimCap connections, which a 1,200-connection flood exceeds: the
// cap and the eviction that keep scrapes going are what is tested here. The
// server without a cap, holding the whole flood, is tested in
// test/unit/http_server_test.cpp.
constexpr std::size_t kSimCap = 800;

TEST_CASE("Daemon keeps serving scrapes under a flood of idle and slow-header connections",
          "[daemon][integration][http_flood]") {
  SimFabric sim(small_fat_tree());
  // The daemon starts with the usual soft limit of 1024 descriptors and
  // raises it to the hard limit itself.
  rlimit nofile{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &nofile) == 0);
  const rlimit original = nofile;
  const bool can_lower = nofile.rlim_max > 2048;
  if (can_lower) {
    nofile.rlim_cur = 1024;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &nofile) == 0);
  }
  Daemon daemon(sim, {"--web.max-connections=" + std::to_string(kSimCap)});
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &original) == 0);
  raise_own_descriptor_limit();
  REQUIRE(daemon.wait_ready());
  if (can_lower) {
    CHECK(daemon.process().read_stderr().find(
              "raised the descriptor limit (RLIMIT_NOFILE) from 1024 to its hard limit " +
              std::to_string(original.rlim_max)) != std::string::npos);
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(daemon.port()) + "/metrics";
  const Figures f = flood_and_scrape("plain", daemon, url, "", false, kSimCap);
  // Descriptors are bounded by the cap, not by the flood, and the daemon
  // said why it closed connections.
  CHECK(f.held <= kSimCap);
  CHECK(f.held >= kSimCap - 60);  // the scrapes took the rest
  CHECK(f.fds_flood <= f.fds_before + kSimCap + 8);
  CHECK(daemon.process().read_stderr().find("connection limit reached (800 in all") !=
        std::string::npos);
}

TEST_CASE(
    "Daemon with TLS and basic auth keeps serving under a flood and reaps it at the header "
    "timeout",
    "[daemon][integration][http_flood][web_config]") {
  SimFabric sim(small_fat_tree());
  raise_own_descriptor_limit();
  const std::string dir = sim.dir();
  const Shell openssl = shell(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout '" +
      dir + "/tls.key' -out '" + dir + "/tls.crt' 2>&1");
  INFO(openssl.out);
  REQUIRE(openssl.exit_code == 0);
  std::ofstream(dir + "/web.yml") << "tls_server_config:\n"
                                     "  cert_file: tls.crt\n"
                                     "  key_file: tls.key\n"
                                     "basic_auth_users:\n"
                                     "  prometheus: "
                                  << bcrypt_hash("s3cret") << "\n";
  Daemon daemon(sim, {"--web.config.file=" + dir + "/web.yml", "--web.header-timeout=3s",
                      "--web.max-connections=" + std::to_string(kSimCap)});
  const std::string url = "https://localhost:" + std::to_string(daemon.port()) + "/metrics";
  const std::string auth = "--cacert '" + dir + "/tls.crt' -u prometheus:s3cret";
  REQUIRE(eventually([&] { return scrape_concurrently(url, auth, 1).ok == 1; }, 60s));

  const Figures f = flood_and_scrape("TLS + basic auth", daemon, url, auth, true, kSimCap);
  CHECK(f.held <= kSimCap);
  CHECK(f.fds_flood <= f.fds_before + kSimCap + 8);

  // Handshaking clients cannot hold a slot past the header timeout: with the
  // flood's sockets still open on our side, the daemon has closed them all.
  const pid_t pid = daemon.process().pid();
  const std::size_t fds_before = descriptors_of(pid);
  Flood flood(daemon.port(), 300, 100, std::string("\x16\x03\x01\x02", 4), '\0');
  REQUIRE(flood.opened() == 400);
  std::this_thread::sleep_for(1s);
  CHECK(flood.held() == 400);
  const auto start = std::chrono::steady_clock::now();
  CHECK(eventually([&] { return flood.held() == 0; }, 10s));
  const auto reaped = std::chrono::steady_clock::now() - start;
  CHECK(reaped < 4s);  // 3 s from the connect, of which 1 s had passed
  CHECK(eventually([&] { return descriptors_of(pid) <= fds_before + 2; }, 5s));
  std::cout << "flood figures [TLS header timeout 3s]: 400 handshaking connections reaped "
            << std::chrono::duration_cast<std::chrono::milliseconds>(reaped).count() + 1000
            << " ms after the connect\n";
}
