// What an operator sees of the daemon under systemd and in its logs: READY=1
// as soon as the listener serves (not after the first sweep), STATUS=
// progress, the version and effective configuration at start-up, the first
// sweep at info, and log lines in the --log.format asked for.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <sstream>

#include "daemon_fixture.h"

using namespace ibfx::test;

namespace {

FatTreeSpec tiny_tree() {
  FatTreeSpec spec;
  spec.servers = 2;
  spec.rails = 1;
  spec.tiers = 2;
  spec.radix = 4;
  return spec;
}

// systemd's end of NOTIFY_SOCKET: an abstract unix datagram socket.
class NotifyReceiver {
 public:
  NotifyReceiver() : name_("@ibfx-ops-notify-" + std::to_string(::getpid())) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, name_.data() + 1, name_.size() - 1);
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size());
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), len) == 0);
    timeval tv{0, 200000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~NotifyReceiver() { ::close(fd_); }
  NotifyReceiver(const NotifyReceiver&) = delete;
  NotifyReceiver& operator=(const NotifyReceiver&) = delete;

  const std::string& name() const { return name_; }
  // Every datagram received so far, in order.
  const std::vector<std::string>& drain() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n < 0) break;
      messages_.emplace_back(buf, static_cast<std::size_t>(n));
    }
    return messages_;
  }

 private:
  std::string name_;
  int fd_ = -1;
  std::vector<std::string> messages_;
};

std::ptrdiff_t index_of(const std::vector<std::string>& messages, const std::string& prefix) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].rfind(prefix, 0) == 0) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

// The daemon's (and its children's) log lines. umad2sim, the simulator's
// preload, prints "ibwarn: ... sim_connect" lines of its own when a process
// attaches; they are not the daemon's and do not exist on real hardware.
std::vector<std::string> log_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ibwarn: ", 0) != 0) out.push_back(line);
  }
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("systemd hears READY=1 when the listener serves, before the first sweep",
          "[operations][integration]") {
  SimFabric sim(make_fat_tree(tiny_tree()));
  NotifyReceiver notify;
  EnvMap env;
  env["NOTIFY_SOCKET"] = notify.name();
  // A sweep interval far longer than the test: only the first sweep runs.
  Process& daemon = sim.spawn({IBFX_DAEMON_PATH, "--web.listen-address=127.0.0.1:0",
                               "--sweep.interval=1m", "--state.directory=" + sim.dir() + "/state"},
                              env);
  REQUIRE(eventually([&] { return index_of(notify.drain(), "STATUS=last sweep:") >= 0; }));
  const auto& messages = notify.drain();
  INFO(daemon.read_stderr());
  const auto ready = index_of(messages, "READY=1");
  const auto listening = index_of(messages, "STATUS=listening on 127.0.0.1:0");
  const auto discovered = index_of(messages, "STATUS=discovered ");
  const auto swept = index_of(messages, "STATUS=last sweep:");
  REQUIRE(ready >= 0);
  CHECK(listening > ready);
  CHECK(discovered > listening);
  CHECK(swept > discovered);
  CHECK(contains(messages[static_cast<std::size_t>(discovered)], "; first sweep running"));
  CHECK(index_of(std::vector<std::string>(messages.begin() + ready + 1, messages.end()),
                 "READY=1") < 0);  // once, not again after the sweep
}

TEST_CASE("Start-up logs the version, the effective configuration and the first sweep",
          "[operations][integration]") {
  SimFabric sim(make_fat_tree(tiny_tree()));
  SECTION("logfmt with timestamps (stderr is not the journal)") {
    Daemon daemon(sim);
    REQUIRE(daemon.wait_ready());
    const std::string err = daemon.process().read_stderr();
    INFO(err);
    CHECK(contains(err, "ibfabric_exporter " IBFX_VERSION " starting; config file none"));
    CHECK(contains(err, " sweep_interval=1s "));
    CHECK(contains(err, " log_format=logfmt "));
    REQUIRE(eventually([&] {
      return contains(daemon.process().read_stderr(), "level=info msg=\"first sweep published");
    }));
    const std::regex logfmt(
        R"(ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(debug|info|warn|error) msg=".*")");
    for (const std::string& line : log_lines(daemon.process().read_stderr())) {
      INFO(line);
      CHECK(std::regex_match(line, logfmt));  // the MAD worker's and discovery's lines too
    }
  }
  SECTION("json") {
    Daemon daemon(sim, {"--log.format=json"});
    REQUIRE(daemon.wait_ready());
    REQUIRE(eventually(
        [&] { return contains(daemon.process().read_stderr(), "first sweep published"); }));
    const std::regex json_line(
        R"re(\{"ts":"[^"]+Z","level":"(debug|info|warn|error)","msg":".*"\})re");
    std::size_t n = 0;
    for (const std::string& line : log_lines(daemon.process().read_stderr())) {
      INFO(line);
      CHECK(std::regex_match(line, json_line));
      ++n;
    }
    CHECK(n > 3);
  }
}

TEST_CASE("The telemetry path flag moves the exposition and the landing page links it",
          "[operations][integration]") {
  SimFabric sim(make_fat_tree(tiny_tree()));
  Daemon daemon(sim, {"--web.telemetry-path=/exporter/metrics"});
  REQUIRE(daemon.wait_ready());
  const HttpReply moved = http_get(daemon.port(), "/exporter/metrics");
  CHECK(moved.status == 200);
  CHECK(contains(moved.body, "infiniband_port_physical_state{"));
  CHECK(http_get(daemon.port(), "/metrics").status == 404);
  CHECK(contains(http_get(daemon.port(), "/").body, "<a href=\"/exporter/metrics\">"));
}
