// The helper-process plumbing (base/child_process.h): descriptors
// placed at 3, 4, ... and nothing else inherited, stdout onto stderr on
// request, exec failures as status 127, a child's output read within a
// deadline and a byte cap, exit descriptions, the shared child flags,
// write_all.
#include "base/child_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace ibfx;

namespace {

// Runs `script` under /bin/sh with `fds` at 3, 4, ...; returns its wait status.
int run_script(const std::string& script, const std::vector<int>& fds,
               bool stdout_to_stderr = false) {
  const pid_t pid = spawn_child({"/bin/sh", "-c", script}, fds, stdout_to_stderr);
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

std::string read_all(int fd) {
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// Runs `script` with its stdout on a pipe and reads it with `limits`.
ChildOutput run_reading(const std::string& script, std::chrono::milliseconds timeout,
                        std::size_t max_bytes, std::function<void()> waiting = {}) {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  const pid_t pid = spawn_child({"/bin/sh", "-c", script}, {}, false, p[1]);
  ::close(p[1]);
  REQUIRE(pid > 0);
  const ChildOutput out = read_child_output(
      pid, p[0], {std::chrono::steady_clock::now() + timeout, max_bytes, std::move(waiting)});
  // Reaped: the pid is no child of ours any more.
  CHECK(::waitpid(pid, nullptr, WNOHANG) == -1);
  return out;
}

}  // namespace

TEST_CASE("read_child_output reads to EOF and reaps the child", "[child_process]") {
  const ChildOutput out = run_reading("printf 'a fabric'; exit 3", std::chrono::seconds(10), 100);
  CHECK(out.cut == ChildOutput::Cut::kNo);
  CHECK(out.output == "a fabric");
  CHECK(WIFEXITED(out.status));
  CHECK(WEXITSTATUS(out.status) == 3);
}

TEST_CASE("read_child_output kills a child past its deadline, even one that closed its output",
          "[child_process]") {
  using std::chrono::milliseconds;
  const auto before = std::chrono::steady_clock::now();
  int waits = 0;
  // exec: the child itself sleeps. A sleep forked by the shell would outlive
  // the killed shell holding the test's own stdout, and ctest would wait the
  // 30 s for it.
  const ChildOutput silent = run_reading("exec sleep 30", milliseconds(300), 100, [&] { ++waits; });
  CHECK(silent.cut == ChildOutput::Cut::kTimeout);
  CHECK(WIFSIGNALED(silent.status));
  CHECK(waits >= 2);  // called while the child is quiet
  const ChildOutput lingering = run_reading("exec >&-; exec sleep 30", milliseconds(300), 100);
  CHECK(lingering.cut == ChildOutput::Cut::kTimeout);
  CHECK(WIFSIGNALED(lingering.status));
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(10));
}

TEST_CASE("read_child_output kills a child that writes more than its cap", "[child_process]") {
  const ChildOutput out =
      run_reading("while :; do printf 0123456789; done", std::chrono::seconds(10), 1000);
  CHECK(out.cut == ChildOutput::Cut::kTooLarge);
  CHECK(WIFSIGNALED(out.status));
}

TEST_CASE("spawn_child puts the given descriptors at 3, 4 and closes every other one",
          "[child_process]") {
  int a[2], b[2];
  REQUIRE(::pipe(a) == 0);
  REQUIRE(::pipe(b) == 0);
  // A descriptor of the parent's that the child must not get (the
  // listener, say): not close-on-exec, so only spawn_child can close it.
  const int stray = ::open("/dev/null", O_RDONLY);
  REQUIRE(stray > 4);
  const std::string script = "echo first >&3; echo second >&4; test -e /proc/self/fd/" +
                             std::to_string(stray) + " && echo leaked >&3; exit 0";
  // Given in the order b, a: b's write end becomes 3.
  const int status = run_script(script, {b[1], a[1]});
  ::close(a[1]);
  ::close(b[1]);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_all(b[0]) == "first\n");
  CHECK(read_all(a[0]) == "second\n");
  ::close(a[0]);
  ::close(b[0]);
  ::close(stray);
}

TEST_CASE("spawn_child can send the child's stdout to its stderr", "[child_process]") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  // The child inherits this process's stderr: make it the pipe for the spawn.
  const int saved = ::dup(STDERR_FILENO);
  REQUIRE(saved >= 0);
  REQUIRE(::dup2(p[1], STDERR_FILENO) == STDERR_FILENO);
  const pid_t pid = spawn_child({"/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2"}, {}, true);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(p[1]);
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_all(p[0]) == "to-stdout\nto-stderr\n");
  ::close(p[0]);
}

TEST_CASE("spawn_child: an exec that fails exits 127, and nothing to run is EINVAL",
          "[child_process]") {
  const pid_t pid = spawn_child({"/nonexistent/ibfx-helper"}, {}, false);
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(describe_status(status) == "exited with status 127");
  errno = 0;
  CHECK(spawn_child({}, {}, false) == -1);
  CHECK(errno == EINVAL);
}

TEST_CASE("describe_status says how a child ended", "[child_process]") {
  CHECK(describe_status(run_script("exit 3", {})) == "exited with status 3");
  CHECK(describe_status(run_script("kill -9 $$", {})) == "was killed by signal 9");
}

TEST_CASE("parse_child_flags reads the shared flags and hands on the others", "[child_process]") {
  std::vector<std::string> args = {"ibfabric_exporter", "--mad-worker", "--ca=mlx5_1",
                                   "--ca-port=2",       "--extra=x",    "--log.level=debug",
                                   "--log.format=json", "--another"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::vector<std::string> others;
  const ChildFlags flags =
      parse_child_flags(static_cast<int>(argv.size()), argv.data(),
                        [&](std::string_view other) { others.emplace_back(other); });
  CHECK(flags.ca == "mlx5_1");
  CHECK(flags.ca_port == 2);
  CHECK(flags.log_level == "debug");
  CHECK(flags.log_format == "json");
  CHECK(others == std::vector<std::string>{"--extra=x", "--another"});
  // The mode flag (argv[1]) is not a flag of its own.
  const ChildFlags none = parse_child_flags(2, argv.data());
  CHECK(none.ca.empty());
  CHECK(none.log_level == "info");
}

TEST_CASE("child_args builds what parse_child_flags reads", "[child_process]") {
  const ChildFlags flags{"mlx5_1", 2, "debug", "json"};
  std::vector<std::string> args = child_args("/proc/self/exe", "--mode", flags, {"--extra=x"});
  CHECK(args == std::vector<std::string>{"/proc/self/exe", "--mode", "--ca=mlx5_1", "--ca-port=2",
                                         "--extra=x", "--log.level=debug", "--log.format=json"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::vector<std::string> others;
  const ChildFlags read =
      parse_child_flags(static_cast<int>(argv.size()), argv.data(),
                        [&](std::string_view other) { others.emplace_back(other); });
  CHECK(read.ca == flags.ca);
  CHECK(read.ca_port == flags.ca_port);
  CHECK(read.log_level == flags.log_level);
  CHECK(read.log_format == flags.log_format);
  CHECK(others == std::vector<std::string>{"--extra=x"});
}

TEST_CASE("write_all writes everything, and false when it cannot", "[child_process]") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const std::string data(10000, 'x');
  REQUIRE(write_all(p[1], data));
  ::close(p[1]);
  CHECK(read_all(p[0]) == data);
  ::close(p[0]);
  // A descriptor that is not open: false, not a crash.
  CHECK_FALSE(write_all(-1, "late"));
}
