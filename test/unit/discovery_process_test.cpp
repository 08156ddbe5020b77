// The parent side of the discovery process: every way a child can fail
// must come back as a DiscoveryResult with a reason, never a hang, a crash
// or a child left behind. Stand-in children are shell scripts that ignore
// the --discover-once arguments and write to the result descriptor (3).
#include "discovery/discovery_process.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>

#include "discovery/fabric_codec.h"
#include "test/support/fake_fabric.h"

using namespace ibfx;
using std::chrono::milliseconds;

namespace {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ibfx-discovery-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // An executable script with `body` after the shebang line.
  std::string script(const std::string& name, const std::string& body) const {
    const std::string p = path_ + "/" + name;
    {
      std::ofstream f(p);
      f << "#!/bin/sh\n" << body << "\n";
    }
    std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p;
  }
  std::string file(const std::string& name, const std::string& bytes) const {
    const std::string p = path_ + "/" + name;
    std::ofstream f(p, std::ios::binary);
    f << bytes;
    return p;
  }

 private:
  std::string path_;
};

DiscoveryResult run_discovery(const std::string& exe, milliseconds timeout = milliseconds(10000),
                              std::size_t max_output = std::size_t{1} << 30) {
  DiscoveryProcessOptions options;
  options.exe = exe;
  options.timeout = timeout;
  options.max_output = max_output;
  DiscoveryProcess process(options);
  DiscoveryResult r = process.discover(DiscoveryConfig{});
  CHECK(process.pid() == -1);  // reaped before discover() returned
  return r;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Discovery process: a child's fabric arrives whole", "[discovery_process]") {
  ScratchDir dir;
  const Fabric fabric = test::star_fabric(3);
  const std::string bytes = dir.file("fabric.bin", encode_fabric(fabric));
  const DiscoveryResult r = run_discovery(dir.script("ok", "cat '" + bytes + "' >&3"));
  INFO(r.error);
  REQUIRE(r.fabric);
  CHECK(r.error.empty());
  CHECK(encode_fabric(*r.fabric) == encode_fabric(fabric));
}

TEST_CASE("Discovery process: the arguments carry the CA and the discovery settings",
          "[discovery_process]") {
  ScratchDir dir;
  // The script fails with its arguments as the reason.
  DiscoveryProcessOptions options;
  options.exe = dir.script("args", "printf '%s ' \"$@\" >&3; exit 1");
  options.ca = "mlx5_3";
  options.ca_port = 2;
  DiscoveryConfig config;
  config.max_smps = 7;
  config.timeout = milliseconds(123);
  config.retries = 4;
  const DiscoveryResult r = DiscoveryProcess(options).discover(config);
  CHECK_FALSE(r.fabric);
  CHECK(r.error ==
        "--discover-once --ca=mlx5_3 --ca-port=2 --max-smps=7 --timeout-ms=123 --retries=4 "
        "--log.level=info --log.format=logfmt");
}

TEST_CASE("Discovery process: a long discovery reports its progress", "[discovery_process]") {
  ScratchDir dir;
  const std::string bytes = dir.file("fabric.bin", encode_fabric(test::star_fabric(2)));
  DiscoveryProcessOptions options;
  options.exe = dir.script("slow", "sleep 1; cat '" + bytes + "' >&3");
  options.progress_interval = milliseconds(300);
  std::vector<std::chrono::seconds> reports;
  options.progress = [&](std::chrono::seconds elapsed) { reports.push_back(elapsed); };
  const DiscoveryResult r = DiscoveryProcess(options).discover(DiscoveryConfig{});
  REQUIRE(r.fabric);
  // At 0.3, 0.6 and 0.9 s at least (the child sleeps 1 s).
  CHECK(reports.size() >= 3);
  CHECK(reports.size() <= 6);  // a loaded machine starts the script late
  CHECK(std::is_sorted(reports.begin(), reports.end()));

  // A quick one says nothing.
  reports.clear();
  options.exe = dir.script("quick", "cat '" + bytes + "' >&3");
  options.progress_interval = std::chrono::seconds(10);
  REQUIRE(DiscoveryProcess(options).discover(DiscoveryConfig{}).fabric);
  CHECK(reports.empty());
}

TEST_CASE("Discovery process: bad output is refused with a reason", "[discovery_process]") {
  ScratchDir dir;
  const std::string good = encode_fabric(test::star_fabric(3));
  SECTION("garbage") {
    const DiscoveryResult r = run_discovery(dir.script("garbage", "printf 'not a fabric' >&3"));
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "malformed fabric"));
  }
  SECTION("truncated") {
    const std::string half = dir.file("half.bin", good.substr(0, good.size() / 2));
    const DiscoveryResult r = run_discovery(dir.script("truncated", "cat '" + half + "' >&3"));
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "malformed fabric"));
  }
  SECTION("nothing at all, yet success") {
    const DiscoveryResult r = run_discovery(dir.script("empty", "exit 0"));
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "malformed fabric"));
  }
  SECTION("more than allowed") {
    const std::string big = dir.file("big.bin", std::string(100000, 'x'));
    const DiscoveryResult r =
        run_discovery(dir.script("big", "cat '" + big + "' >&3"), milliseconds(10000), 1000);
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "more than 1000 bytes"));
  }
}

TEST_CASE("Discovery process: a failing child's reason or exit status is reported",
          "[discovery_process]") {
  ScratchDir dir;
  SECTION("its own reason, escaped as every log text (base/log_text.h)") {
    const DiscoveryResult r = run_discovery(
        dir.script("reason", "printf 'libibnetdisc: fabric discovery failed\\n\\001' >&3; exit 1"));
    CHECK_FALSE(r.fabric);
    CHECK(r.error == "libibnetdisc: fabric discovery failed\\x0a\\x01");
  }
  SECTION("a non-zero exit without a reason") {
    const DiscoveryResult r = run_discovery(dir.script("exit3", "exit 3"));
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "exited with status 3"));
  }
  SECTION("a valid fabric does not make up for a non-zero exit") {
    const std::string bytes = dir.file("fabric.bin", encode_fabric(test::star_fabric(1)));
    const DiscoveryResult r = run_discovery(dir.script("late", "cat '" + bytes + "' >&3; exit 2"));
    CHECK_FALSE(r.fabric);
  }
  SECTION("killed by a signal") {
    const DiscoveryResult r = run_discovery(dir.script("killed", "printf 'x' >&3; kill -9 $$"));
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "killed by signal 9"));
  }
  SECTION("an executable that is not there") {
    const DiscoveryResult r = run_discovery("/nonexistent/ibfx-discover");
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "exited with status 127"));
  }
}

TEST_CASE("Discovery process: a child that takes too long is killed and reaped",
          "[discovery_process]") {
  ScratchDir dir;
  // The child reports its pid first, so the test can check it is gone.
  const std::string pid_file = dir.file("pid", "");
  const auto started = std::chrono::steady_clock::now();
  SECTION("silent") {
    const DiscoveryResult r = run_discovery(
        dir.script("hang", "echo $$ > '" + pid_file + "'; exec sleep 30"), milliseconds(300));
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "did not finish in 300 ms"));
  }
  SECTION("its result descriptor closed, but still running") {
    const DiscoveryResult r = run_discovery(
        dir.script("linger", "echo $$ > '" + pid_file + "'; exec 3>&-; exec sleep 30"),
        milliseconds(300));
    CHECK_FALSE(r.fabric);
    CHECK(contains(r.error, "did not finish in 300 ms"));
  }
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  std::ifstream in(pid_file);
  pid_t pid = 0;
  REQUIRE(in >> pid);
  CHECK((::kill(pid, 0) != 0 && errno == ESRCH));
}

TEST_CASE("Discovery process: stop() ends a discovery in progress and refuses new ones",
          "[discovery_process]") {
  ScratchDir dir;
  DiscoveryProcessOptions options;
  options.exe = dir.script("hang", "exec sleep 30");
  DiscoveryProcess process(options);
  DiscoveryResult r;
  std::thread t([&] { r = process.discover(DiscoveryConfig{}); });
  for (int i = 0; i < 500 && process.pid() == -1; ++i)
    std::this_thread::sleep_for(milliseconds(10));
  const pid_t pid = process.pid();
  CHECK(pid > 0);
  const auto started = std::chrono::steady_clock::now();
  process.stop();
  t.join();
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
  CHECK_FALSE(r.fabric);
  CHECK(r.error == "stopping");
  CHECK((::kill(pid, 0) != 0 && errno == ESRCH));
  CHECK(process.discover(DiscoveryConfig{}).error == "stopping");
}
