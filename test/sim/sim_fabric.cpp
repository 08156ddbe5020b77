#include "test/sim/sim_fabric.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace ibfx::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string errno_text(int error) { return std::strerror(error); }

std::string read_file_from(const std::string& path, std::size_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), static_cast<off_t>(offset + out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string read_file(const std::string& path) { return read_file_from(path, 0); }

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) throw std::runtime_error("cannot write " + path);
}

std::string tail_lines(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (std::size_t seen = 0; pos > 0; --pos) {
    if (text[pos - 1] == '\n' && ++seen == lines) break;
  }
  return text.substr(pos);
}

// Polling with a short sleep that grows: answers from ibsim take well under
// a millisecond, so the first checks are fast, and long waits stay cheap.
class Backoff {
 public:
  void sleep() {
    std::this_thread::sleep_for(delay_);
    delay_ = std::min(delay_ * 2, milliseconds(20));
  }

 private:
  milliseconds delay_{1};
};

// Incremental search in a growing log file.
class LogWatch {
 public:
  explicit LogWatch(std::string path) : path_(std::move(path)) {}
  bool contains(const std::string& needle) {
    if (found_) return true;
    const std::string fresh = read_file_from(path_, offset_);
    offset_ += fresh.size();
    window_ += fresh;
    found_ = window_.find(needle) != std::string::npos;
    // Keep just enough to match a needle split across two reads.
    if (window_.size() > needle.size()) window_.erase(0, window_.size() - needle.size());
    return found_;
  }

 private:
  std::string path_;
  std::size_t offset_ = 0;
  std::string window_;
  bool found_ = false;
};

EnvMap current_environment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

// LD_PRELOAD without umad2sim entries: ibsim itself must not be preloaded
// (it would try to attach to itself) even if the test runs under a preload.
std::string strip_umad2sim(const std::string& preload) {
  std::string out;
  std::size_t start = 0;
  while (start <= preload.size()) {
    std::size_t end = preload.find_first_of(": ", start);
    if (end == std::string::npos) end = preload.size();
    const std::string item = preload.substr(start, end - start);
    if (!item.empty() && item.find("umad2sim") == std::string::npos) {
      if (!out.empty()) out += ':';
      out += item;
    }
    start = end + 1;
  }
  return out;
}

std::string find_executable(const std::string& program, const EnvMap& env) {
  if (program.find('/') != std::string::npos) return program;
  std::string path;
  if (const auto it = env.find("PATH"); it != env.end()) path = it->second;
  // The infiniband-diags and opensm binaries live in sbin, often not in a
  // non-root PATH.
  path += ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + program;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  throw std::runtime_error("cannot find program \"" + program + "\" in PATH");
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// An exit code as decode_status() gives it, in words.
std::string describe_exit(int code) {
  if (code > 128) {
    const char* name = ::strsignal(code - 128);
    return "was killed by signal " + std::to_string(code - 128) + " (" +
           (name != nullptr ? name : "?") + ")";
  }
  if (code < 0) return "exited (status unknown)";
  return "exited with status " + std::to_string(code);
}

// Where unexpected exits of ibsim/opensm are reported (set_exit_reporter()).
std::mutex& reporter_mutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
SimFabric::ExitReporter& exit_reporter() {
  static auto* reporter = new SimFabric::ExitReporter();
  return *reporter;
}

// Everything the child needs, built before fork(): between fork() and exec()
// only async-signal-safe calls are allowed (other threads may hold malloc's
// locks).
struct PreparedSpawn {
  std::string exe;
  std::vector<std::string> args;
  std::vector<std::string> envs;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string cwd, stdin_path, stdout_path, stderr_path;
};

// Forks every child from one thread that lives as long as the process.
// PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, so
// forking from the caller's thread would kill a fabric built on a short-lived
// thread; forking from here means children die exactly when the test
// process does (crash, SIGKILL, timeout kill by ctest).
class Spawner {
 public:
  static Spawner& instance() {
    // Leaked: its thread must outlive static destruction.
    static Spawner* spawner = new Spawner();
    return *spawner;
  }

  pid_t spawn(const PreparedSpawn& prepared) {
    Request request{&prepared};
    std::unique_lock lock(mu_);
    queue_.push_back(&request);
    cv_.notify_all();
    cv_.wait(lock, [&] { return request.done; });
    if (request.error != 0) {
      throw std::runtime_error("cannot start \"" + prepared.exe + "\": " + request.stage + ": " +
                               errno_text(request.error));
    }
    return request.pid;
  }

 private:
  struct Request {
    const PreparedSpawn* prepared;
    bool done = false;
    pid_t pid = -1;
    int error = 0;
    const char* stage = "";
  };

  Spawner() {
    // The thread blocks every signal so that signals meant for the test
    // (SIGINT, SIGTERM, SIGCHLD handlers...) are never delivered to it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    std::thread([this] { loop(); }).detach();
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

  void loop() {
    for (;;) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty(); });
      Request* request = queue_.front();
      queue_.pop_front();
      lock.unlock();
      fork_exec(*request);
      lock.lock();
      request->done = true;
      cv_.notify_all();
    }
  }

  static void fork_exec(Request& request) {
    const PreparedSpawn& p = *request.prepared;
    int status_pipe[2];
    if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
      request.error = errno;
      request.stage = "pipe";
      return;
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      request.error = errno;
      request.stage = "fork";
      ::close(status_pipe[0]);
      ::close(status_pipe[1]);
      return;
    }
    if (pid == 0) child(p, parent, status_pipe[1]);
    ::close(status_pipe[1]);
    // The exec closes the pipe (O_CLOEXEC): EOF means success; otherwise the
    // child reports which step failed and its errno.
    struct {
      int error;
      int stage;
    } report{};
    ssize_t n;
    do {
      n = ::read(status_pipe[0], &report, sizeof(report));
    } while (n < 0 && errno == EINTR);
    ::close(status_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof(report))) {
      static const char* const kStages[] = {"chdir", "stdin", "stdout", "stderr", "exec"};
      request.error = report.error;
      request.stage = kStages[std::clamp(report.stage, 0, 4)];
      int status;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return;
    }
    request.pid = pid;
  }

  [[noreturn]] static void child(const PreparedSpawn& p, pid_t parent, int status_fd) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) {
      ::sigaction(sig, &dfl, nullptr);
    }
    auto fail = [status_fd](int stage) {
      const int report[2] = {errno, stage};
      [[maybe_unused]] const ssize_t n = ::write(status_fd, report, sizeof(report));
      ::_exit(127);
    };
    if (::chdir(p.cwd.c_str()) != 0) fail(0);
    const int in = ::open(p.stdin_path.c_str(), O_RDONLY);
    if (in < 0 || ::dup2(in, 0) < 0) fail(1);
    const int out = ::open(p.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || ::dup2(out, 1) < 0) fail(2);
    const int err = ::open(p.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0 || ::dup2(err, 2) < 0) fail(3);
    // Do not leak the test's descriptors (ctest's pipes, sockets) into
    // the children; the status pipe closes itself on exec.
    const unsigned keep = static_cast<unsigned>(status_fd);
    if (keep > 3) ::close_range(3, keep - 1, 0);
    ::close_range(keep + 1, ~0U, 0);
    ::execve(p.exe.c_str(), p.argv.data(), p.envp.data());
    fail(4);
    ::_exit(127);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request*> queue_;
};

// Live instances, torn down by an atexit hook if std::exit() is called
// while one exists (destructors of locals do not run then).
std::mutex& registry_mutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::set<SimFabric*>& registry() {
  static auto* set = new std::set<SimFabric*>();
  return *set;
}
void shutdown_all_at_exit() {
  std::vector<SimFabric*> live;
  {
    std::lock_guard lock(registry_mutex());
    live.assign(registry().begin(), registry().end());
  }
  for (SimFabric* fabric : live) fabric->shutdown();
}
void register_instance(SimFabric* fabric) {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(shutdown_all_at_exit); });
  std::lock_guard lock(registry_mutex());
  registry().insert(fabric);
}
void unregister_instance(SimFabric* fabric) {
  std::lock_guard lock(registry_mutex());
  registry().erase(fabric);
}

std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/ibfx-sim-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + ": " + errno_text(errno));
  }
  return pattern;
}

// ibsim attaches every client to the first node record of the net file.
bool first_node_is_switch(const std::string& netfile) {
  std::size_t pos = 0;
  while (pos < netfile.size()) {
    std::size_t eol = netfile.find('\n', pos);
    if (eol == std::string::npos) eol = netfile.size();
    const std::string_view line(netfile.data() + pos, eol - pos);
    if (line.starts_with("Switch")) return true;
    if (line.starts_with("Hca") || line.starts_with("Ca") || line.starts_with("Rt")) return false;
    pos = eol + 1;
  }
  return false;
}

// Whether ibsim has bound its control socket (abstract "@<sockname>:ctl").
// Clients that connect earlier get ECONNREFUSED and sleep 2 s before
// retrying, which would dominate the bring-up time.
bool ctl_socket_bound(const std::string& sockname) {
  const std::string table = read_file("/proc/net/unix");
  if (table.empty()) return true;  // cannot tell: let the client retry
  return table.find("@" + sockname + ":ctl") != std::string::npos;
}

void check_console_output(std::string_view command, const std::string& output) {
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t eol = output.find('\n', pos);
    if (eol == std::string::npos) eol = output.size();
    const std::string_view line(output.data() + pos, eol - pos);
    if (line.starts_with("# ") || line.find("unknown - skipped") != std::string_view::npos) {
      throw std::runtime_error("ibsim: " + std::string(command) + ": " + std::string(line));
    }
    pos = eol + 1;
  }
}

std::string quoted_port(std::string_view node, int port) {
  return "\"" + std::string(node) + "\"[" + std::to_string(port) + "]";
}

// "LinkState:.......................Active" -> "Active" (infiniband-diags
// output); empty if the field is absent.
std::string field_value(const std::string& output, const std::string& name) {
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t eol = output.find('\n', pos);
    if (eol == std::string::npos) eol = output.size();
    const std::string_view line(output.data() + pos, eol - pos);
    pos = eol + 1;
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') continue;
    std::size_t value = name.size() + 1;
    while (value < line.size() && line[value] == '.') ++value;
    return std::string(line.substr(value));
  }
  return {};
}

int parse_int_after(std::string_view text, std::size_t pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), value);
  return ec == std::errc() ? value : 0;
}

std::atomic<unsigned> g_instance_counter{0};

}  // namespace

// ---------------------------------------------------------------- Process

Process Process::start(const Spec& spec) {
  if (spec.argv.empty()) throw std::invalid_argument("Process::start: empty argv");
  PreparedSpawn p;
  p.exe = find_executable(spec.argv[0], spec.env);
  p.args = spec.argv;
  for (const auto& [key, value] : spec.env) p.envs.push_back(key + "=" + value);
  for (std::string& a : p.args) p.argv.push_back(a.data());
  p.argv.push_back(nullptr);
  for (std::string& e : p.envs) p.envp.push_back(e.data());
  p.envp.push_back(nullptr);
  p.cwd = spec.cwd;
  p.stdin_path = spec.stdin_path;
  p.stdout_path = spec.stdout_path;
  p.stderr_path = spec.stderr_path;

  Process process;
  process.pid_ = Spawner::instance().spawn(p);
  process.name_ = spec.argv[0];
  process.stdout_path_ = spec.stdout_path;
  process.stderr_path_ = spec.stderr_path;
  return process;
}

Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      exit_code_(std::exchange(other.exit_code_, std::nullopt)),
      name_(std::move(other.name_)),
      stdout_path_(std::move(other.stdout_path_)),
      stderr_path_(std::move(other.stderr_path_)) {}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    if (pid_ >= 0 && !exit_code_) terminate();
    pid_ = std::exchange(other.pid_, -1);
    exit_code_ = std::exchange(other.exit_code_, std::nullopt);
    name_ = std::move(other.name_);
    stdout_path_ = std::move(other.stdout_path_);
    stderr_path_ = std::move(other.stderr_path_);
  }
  return *this;
}

Process::~Process() {
  if (pid_ >= 0 && !exit_code_) terminate();
}

bool Process::running() {
  if (pid_ < 0 || exit_code_) return false;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return true;
  // r < 0 (ECHILD): someone else reaped it (e.g. SIGCHLD ignored).
  exit_code_ = r == pid_ ? decode_status(status) : -1;
  return false;
}

RunResult Process::run(const Spec& spec, milliseconds timeout, milliseconds grace) {
  Process process = start(spec);
  RunResult result;
  if (const auto code = process.wait(timeout)) {
    result.exit_code = *code;
  } else {
    result.timed_out = true;
    process.terminate(grace);
    result.exit_code = -1;
  }
  result.out = read_file(spec.stdout_path);
  result.err = read_file(spec.stderr_path);
  ::unlink(spec.stdout_path.c_str());
  ::unlink(spec.stderr_path.c_str());
  return result;
}

std::optional<int> Process::wait(milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Backoff backoff;
  while (running()) {
    if (Clock::now() >= deadline) return std::nullopt;
    backoff.sleep();
  }
  return exit_code_;
}

void Process::kill(int signal) {
  if (running()) ::kill(pid_, signal);
}

int Process::terminate(milliseconds grace) {
  if (!running()) return exit_code_.value_or(-1);
  ::kill(pid_, SIGTERM);
  if (wait(grace)) return *exit_code_;
  ::kill(pid_, SIGKILL);
  wait(milliseconds(10000));
  return exit_code_.value_or(-1);
}

std::string Process::read_stdout() const { return read_file(stdout_path_); }
std::string Process::read_stderr() const { return read_file(stderr_path_); }

// ---------------------------------------------------------------- SimFabric

namespace {
SimOptions with_sizes(SimOptions options, const SimSizes& sizes) {
  if (!options.sizes) options.sizes = sizes;
  return options;
}
}  // namespace

SimFabric::SimFabric(std::string netfile_text, SimOptions options)
    : options_(std::move(options)), netfile_(std::move(netfile_text)) {
  sizes_ = options_.sizes ? *options_.sizes : estimate_sizes(netfile_);
  register_instance(this);
  try {
    bring_up();
  } catch (...) {
    // The exception says what went wrong, exits included.
    ibsim_stopped_ = opensm_stopped_ = true;
    shutdown();
    throw;
  }
}

SimFabric::SimFabric(const Fabric& fabric, SimOptions options)
    : SimFabric(fabric.to_netfile(), with_sizes(std::move(options), fabric.sizes())) {}

SimFabric::SimFabric(const FatTreeSpec& spec, SimOptions options)
    : SimFabric(make_fat_tree(spec), std::move(options)) {}

SimFabric::~SimFabric() { shutdown(); }

pid_t SimFabric::ibsim_pid() const { return ibsim_ ? ibsim_->pid() : -1; }
pid_t SimFabric::opensm_pid() const { return opensm_ ? opensm_->pid() : -1; }

EnvMap SimFabric::env() const {
  const EnvMap full = client_env();
  return {{"LD_PRELOAD", full.at("LD_PRELOAD")}, {"IBSIM_SOCKNAME", sockname_}};
}

EnvMap SimFabric::client_env() const {
  EnvMap env = current_environment();
  // Keep a sanitizer runtime (which must come first) in front of umad2sim.
  const std::string others = strip_umad2sim(env["LD_PRELOAD"]);
  env["LD_PRELOAD"] = others.empty() ? options_.preload : others + ":" + options_.preload;
  env["IBSIM_SOCKNAME"] = sockname_;
  return env;
}

void SimFabric::bring_up() {
  const auto start = Clock::now();
  const auto deadline = start + options_.timeout;

  dir_ = make_temp_dir();
  netfile_path_ = dir_ + "/net";
  write_file(netfile_path_, netfile_);
  console_path_ = dir_ + "/console";
  if (::mkfifo(console_path_.c_str(), 0600) != 0) {
    throw std::runtime_error("mkfifo " + console_path_ + ": " + errno_text(errno));
  }
  // Read-write: we stay a writer for ibsim's whole life (at EOF on its
  // console ibsim would spin), and the open does not block.
  console_fd_ = ::open(console_path_.c_str(), O_RDWR | O_CLOEXEC);
  if (console_fd_ < 0) {
    throw std::runtime_error("open " + console_path_ + ": " + errno_text(errno));
  }
  attach_is_switch_ = first_node_is_switch(netfile_);
  sockname_ = "ibfx-" + std::to_string(::getpid()) + "-" + std::to_string(++g_instance_counter);
  start_simulator(deadline);
  bringup_time_ = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

void SimFabric::kill_simulator() {
  std::lock_guard lock(mu_);
  // What died on its own before the test stopped it still counts.
  earlier_exits_ += exits_text_locked();
  ibsim_stopped_ = true;
  opensm_stopped_ = true;
  if (opensm_ && opensm_->running()) {
    opensm_->kill(SIGKILL);
    opensm_->wait(milliseconds(5000));
  }
  if (ibsim_ && ibsim_->running()) {
    ibsim_->kill(SIGKILL);
    ibsim_->wait(milliseconds(5000));
  }
}

void SimFabric::restart_simulator() {
  kill_simulator();
  {
    std::lock_guard lock(mu_);
    if (shut_down_) throw std::logic_error("SimFabric::restart_simulator after shutdown");
    // The old logs stay, numbered, for failure analysis; the new processes
    // write fresh ones (console() reads ibsim.out from its start).
    ++restarts_;
    for (const char* name : {"ibsim.out", "ibsim.err", "opensm.out", "opensm.log"}) {
      const std::string from = dir_ + "/" + name;
      const std::string to = from + "." + std::to_string(restarts_);
      ::rename(from.c_str(), to.c_str());
    }
    lids_.clear();
  }
  {
    std::lock_guard lock(console_mu_);
    console_offset_ = 0;
  }
  start_simulator(Clock::now() + options_.timeout);
}

void SimFabric::start_simulator(Clock::time_point deadline) {
  start_ibsim();
  Backoff backoff;
  for (;;) {
    const std::string out = read_file(dir_ + "/ibsim.out");
    const std::size_t ready = out.find("Network simulator ready");
    const std::size_t prompt = ready == std::string::npos ? ready : out.find("sim> ", ready);
    if (prompt != std::string::npos && ctl_socket_bound(sockname_)) {
      console_offset_ = prompt + 5;
      break;
    }
    if (!ibsim_->running()) {
      fail("ibsim exited with status " + std::to_string(ibsim_->exit_code().value_or(-1)) +
           " while starting");
    }
    if (Clock::now() >= deadline) {
      fail("ibsim not ready after " + std::to_string(options_.timeout.count()) + " ms");
    }
    backoff.sleep();
  }

  if (options_.opensm) {
    start_opensm();
    wait_for_pma(deadline);
  }
}

void SimFabric::start_ibsim() {
  Process::Spec spec;
  spec.argv = {options_.ibsim_path, "-s"};
  for (const std::string& arg : sizes_.args()) spec.argv.push_back(arg);
  spec.argv.push_back(netfile_path_);
  spec.env = current_environment();
  spec.env["LD_PRELOAD"] = strip_umad2sim(spec.env["LD_PRELOAD"]);
  if (spec.env["LD_PRELOAD"].empty()) spec.env.erase("LD_PRELOAD");
  spec.env["IBSIM_SOCKNAME"] = sockname_;
  spec.cwd = dir_;
  spec.stdin_path = console_path_;
  spec.stdout_path = dir_ + "/ibsim.out";
  spec.stderr_path = dir_ + "/ibsim.err";
  std::lock_guard lock(mu_);
  ibsim_ = Process::start(spec);
  ibsim_stopped_ = false;
}

void SimFabric::start_opensm() {
  // Every path opensm would write or read by default (/var/log,
  // /var/cache/opensm, /etc/opensm) points into the temp dir, so parallel
  // instances and the host's own config never interfere.
  std::string conf;
  conf += "log_file " + dir_ + "/opensm.log\n";
  conf += "force_log_flush TRUE\n";  // we watch the log for SUBNET UP
  conf += "dump_files_dir " + dir_ + "\n";
  conf += "partition_config_file " + dir_ + "/partitions.conf\n";
  conf += "qos_policy_file " + dir_ + "/qos-policy.conf\n";
  conf += "prefix_routes_file " + dir_ + "/prefix-routes.conf\n";
  conf += "per_module_logging_file " + dir_ + "/per-module-logging.conf\n";
  conf += "torus_config " + dir_ + "/torus-2QoS.conf\n";
  conf += "console off\n";
  conf += "fsync_high_avail_files FALSE\n";
  for (const std::string& line : options_.opensm_config) conf += line + "\n";
  write_file(dir_ + "/opensm.conf", conf);

  Process::Spec spec;
  spec.argv = {options_.opensm_path, "-F", dir_ + "/opensm.conf"};
  spec.env = client_env();
  spec.env["OSM_CACHE_DIR"] = dir_;
  spec.cwd = dir_;
  spec.stdout_path = dir_ + "/opensm.out";
  spec.stderr_path = dir_ + "/opensm.out";
  std::lock_guard lock(mu_);
  opensm_ = Process::start(spec);
  opensm_stopped_ = false;
}

std::map<std::uint64_t, int> SimFabric::sm_lid_assignment() const {
  // opensm's persistent database: "<guid> <min lid> <max lid>" entries, in
  // hex, each followed by a blank line.
  std::map<std::uint64_t, int> assignment;
  std::istringstream in(read_file(dir_ + "/guid2lid"));
  std::string guid, min_lid, max_lid;
  while (in >> guid >> min_lid >> max_lid) {
    assignment[std::stoull(guid, nullptr, 16)] = std::stoi(min_lid, nullptr, 16);
  }
  return assignment;
}

void SimFabric::restart_opensm(const std::map<std::uint64_t, int>& assignment) {
  if (!options_.opensm) throw std::logic_error("SimFabric: restart_opensm() without opensm");
  {
    std::lock_guard lock(mu_);
    earlier_exits_ += exits_text_locked();
    opensm_stopped_ = true;
    if (opensm_) opensm_->terminate(milliseconds(1000));
  }
  // Written after the old SM exited, which may store its own cache on the
  // way out. The blank line ends an entry: without it opensm reads the next
  // line as more of the same value and silently drops the entry.
  if (!assignment.empty()) {
    std::string db;
    for (const auto& [guid, lid] : assignment) {
      char entry[64];
      std::snprintf(entry, sizeof entry, "0x%016llx 0x%04x 0x%04x\n\n",
                    static_cast<unsigned long long>(guid), static_cast<unsigned>(lid),
                    static_cast<unsigned>(lid));
      db += entry;
    }
    write_file(dir_ + "/guid2lid", db);
  }
  // A fresh log, so that the wait below sees this SM's SUBNET UP, not the
  // previous one's.
  std::error_code ec;
  std::filesystem::rename(dir_ + "/opensm.log",
                          dir_ + "/opensm.log." + std::to_string(++opensm_restarts_), ec);
  start_opensm();
  wait_for_pma(Clock::now() + options_.timeout);
  lids(true);
}

void SimFabric::wait_for_pma(Clock::time_point deadline) {
  LogWatch log(dir_ + "/opensm.log");
  Backoff backoff;
  std::string problem = "opensm has not reported SUBNET UP";
  for (;;) {
    if (!ibsim_->running()) {
      fail("ibsim exited with status " + std::to_string(ibsim_->exit_code().value_or(-1)));
    }
    if (!opensm_->running()) {
      fail("opensm exited with status " + std::to_string(opensm_->exit_code().value_or(-1)));
    }
    if (log.contains("SUBNET UP")) {
      const auto remaining = std::max(
          std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), milliseconds(1));
      const int lid = options_.probe_switch.empty() ? attached_switch_lid(remaining, problem)
                                                    : probe_switch_lid(remaining, problem);
      if (lid > 0) {
        const RunResult probe = run({"perfquery", std::to_string(lid)}, remaining);
        if (probe.ok()) return;
        problem = "perfquery " + std::to_string(lid) + " failed: " + probe.err;
      }
    }
    if (Clock::now() >= deadline) {
      fail("fabric not up after " + std::to_string(options_.timeout.count()) + " ms: " + problem);
    }
    backoff.sleep();
  }
}

int SimFabric::attached_switch_lid(milliseconds timeout, std::string& problem) {
  // By directed route, not ibnetdiscover: a full discovery adds ~20 s to the
  // 16k fabric's bring-up, and many users (the daemon benchmarks) never need
  // the LID map. The switch is the attach point itself or the node
  // behind port 1 of the attach HCA (ibsim attaches clients to the first
  // node of the net file).
  const std::string path = attach_is_switch_ ? "0" : "0,1";
  const RunResult info = run({"smpquery", "-D", "portinfo", path, "0"}, timeout);
  const std::string lid = field_value(info.out, "Lid");
  if (info.ok() && !lid.empty() && lid != "0") return parse_int_after(lid, 0);
  problem = "no LID on the switch at directed route " + path + " yet: " + info.err;
  return 0;
}

int SimFabric::probe_switch_lid(milliseconds timeout, std::string& problem) {
  const RunResult discover = run({"ibnetdiscover"}, timeout);
  if (!discover.ok()) {
    problem = "ibnetdiscover failed: " + discover.err;
    return 0;
  }
  std::map<std::string, int> found = parse_ibnetdiscover_lids(discover.out);
  const auto it = found.find(options_.probe_switch);
  if (it == found.end() || it->second <= 0) {
    problem = "no LID for probe switch \"" + options_.probe_switch + "\" yet";
    return 0;
  }
  const int lid = it->second;
  std::lock_guard lock(mu_);
  lids_ = std::move(found);
  return lid;
}

std::string SimFabric::unexpected_exits() {
  std::lock_guard lock(mu_);
  return unexpected_exits_locked();
}

std::string SimFabric::unexpected_exits_locked() {
  const std::string found = earlier_exits_ + exits_text_locked();
  if (found.empty()) return found;
  return "SimFabric (" + dir_ + "): " + found + log_tail();
}

std::string SimFabric::exits_text_locked() {
  std::string found;
  auto check = [&found](std::optional<Process>& process, bool stopped, const char* name) {
    if (!process || stopped || process->running()) return;
    found += std::string(name) + " (pid " + std::to_string(process->pid()) + ") " +
             describe_exit(process->exit_code().value_or(-1)) + " while the test ran\n";
  };
  check(ibsim_, ibsim_stopped_, "ibsim");
  check(opensm_, opensm_stopped_, "opensm");
  return found;
}

void SimFabric::acknowledge_exits() {
  std::lock_guard lock(mu_);
  if (ibsim_ && !ibsim_->running()) ibsim_stopped_ = true;
  if (opensm_ && !opensm_->running()) opensm_stopped_ = true;
  earlier_exits_.clear();
}

SimFabric::ExitReporter SimFabric::set_exit_reporter(ExitReporter reporter) {
  std::lock_guard lock(reporter_mutex());
  return std::exchange(exit_reporter(), std::move(reporter));
}

void SimFabric::fail(const std::string& what) const {
  throw std::runtime_error("SimFabric (" + dir_ + "): " + what + "\n" + log_tail());
}

std::string SimFabric::log_tail(std::size_t lines) const {
  std::string out;
  for (const char* name : {"ibsim.out", "ibsim.err", "opensm.out", "opensm.log"}) {
    const std::string text = read_file(dir_ + "/" + name);
    if (text.empty()) continue;
    out += "--- " + std::string(name) + " ---\n" + tail_lines(text, lines);
    if (out.back() != '\n') out += '\n';
  }
  return out;
}

std::string SimFabric::console(std::string_view command) {
  if (command.size() > 120 || command.find_first_of("\r\n") != std::string_view::npos) {
    throw std::invalid_argument("ibsim console: command must be one line of <= 120 characters");
  }
  std::lock_guard lock(console_mu_);
  if (!ibsim_ || !ibsim_->running())
    throw std::runtime_error("ibsim console: ibsim is not running");
  // ibsim echoes a comment line verbatim and then prints its prompt, so the
  // comment after the command marks the end of the command's output.
  const std::string marker = "# ibfx-sync-" + std::to_string(++console_seq_);
  const std::string expected = marker + "sim> ";
  const std::string text = std::string(command) + "\n" + marker + "\n";
  // One write, shorter than PIPE_BUF: atomic, never interleaved.
  ssize_t written;
  do {
    written = ::write(console_fd_, text.data(), text.size());
  } while (written < 0 && errno == EINTR);
  if (written != static_cast<ssize_t>(text.size())) {
    throw std::runtime_error("ibsim console: write failed: " + errno_text(errno));
  }
  const auto deadline = Clock::now() + options_.command_timeout;
  const std::string out_path = dir_ + "/ibsim.out";
  Backoff backoff;
  for (;;) {
    const std::string fresh = read_file_from(out_path, console_offset_);
    const std::size_t pos = fresh.find(expected);
    if (pos != std::string::npos) {
      console_offset_ += pos + expected.size();
      std::string output = fresh.substr(0, pos);
      if (output.ends_with("sim> ")) output.resize(output.size() - 5);
      return output;
    }
    if (!ibsim_->running()) fail("ibsim exited while running \"" + std::string(command) + "\"");
    if (Clock::now() >= deadline) {
      fail("ibsim console: no answer to \"" + std::string(command) + "\"");
    }
    backoff.sleep();
  }
}

void SimFabric::perf_set(std::string_view node, int port, std::string_view counter,
                         std::uint64_t value) {
  std::string attribute(counter);
  if (attribute.find('.') == std::string::npos) attribute = "PortCounters." + attribute;
  const std::string command =
      "PerformanceSet " + quoted_port(node, port) + " " + attribute + "=" + std::to_string(value);
  const std::string output = console(command);
  check_console_output(command, output);
  if (output.find("has been set to") == std::string::npos) {
    throw std::runtime_error("ibsim: " + command + ": unexpected answer: " + output);
  }
}

void SimFabric::unlink(std::string_view node, int port) {
  const std::string command = "Unlink " + quoted_port(node, port);
  check_console_output(command, console(command));
}

void SimFabric::relink(std::string_view node, int port) {
  const std::string command = "ReLink " + quoted_port(node, port);
  check_console_output(command, console(command));
}

void SimFabric::error_rate(std::string_view node, int port, int rate) {
  if (rate < 0 || rate > 100) throw std::invalid_argument("error rate must be in [0, 100]");
  const std::string command = "Error " + quoted_port(node, port) + " " + std::to_string(rate);
  check_console_output(command, console(command));
}

RunResult SimFabric::run(const std::vector<std::string>& argv, milliseconds timeout) {
  if (timeout.count() <= 0) timeout = options_.command_timeout;
  std::uint64_t seq;
  {
    std::lock_guard lock(mu_);
    if (shut_down_) throw std::logic_error("SimFabric::run after shutdown");
    seq = ++run_seq_;
  }
  Process::Spec spec;
  spec.argv = argv;
  spec.env = client_env();
  spec.cwd = dir_;
  spec.stdout_path = dir_ + "/run-" + std::to_string(seq) + ".out";
  spec.stderr_path = dir_ + "/run-" + std::to_string(seq) + ".err";
  return Process::run(spec, timeout, milliseconds(200));
}

Process& SimFabric::spawn(const std::vector<std::string>& argv, const EnvMap& extra_env) {
  if (argv.empty()) throw std::invalid_argument("SimFabric::spawn: empty argv");
  Process::Spec spec;
  spec.argv = argv;
  spec.env = client_env();
  for (const auto& [key, value] : extra_env) spec.env[key] = value;
  spec.cwd = dir_;
  std::lock_guard lock(mu_);
  if (shut_down_) throw std::logic_error("SimFabric::spawn after shutdown");
  const std::string base =
      std::filesystem::path(argv[0]).filename().string() + "-" + std::to_string(++run_seq_);
  spec.stdout_path = dir_ + "/" + base + ".out";
  spec.stderr_path = dir_ + "/" + base + ".err";
  children_.push_back(Process::start(spec));
  return children_.back();
}

std::map<std::string, int> SimFabric::discover_lids() {
  const RunResult result = run({"ibnetdiscover"});
  if (!result.ok()) {
    throw std::runtime_error("ibnetdiscover failed (" + std::to_string(result.exit_code) +
                             "): " + result.err);
  }
  return parse_ibnetdiscover_lids(result.out);
}

std::map<std::string, int> SimFabric::lids(bool refresh) {
  {
    std::lock_guard lock(mu_);
    if (!refresh && !lids_.empty()) return lids_;
  }
  std::map<std::string, int> fresh = discover_lids();
  std::lock_guard lock(mu_);
  lids_ = fresh;
  return fresh;
}

int SimFabric::lid_of(std::string_view node) {
  const std::string name(node);
  for (bool refresh : {false, true}) {
    const std::map<std::string, int> map = lids(refresh);
    if (const auto it = map.find(name); it != map.end()) return it->second;
  }
  throw std::out_of_range("SimFabric: no LID for node \"" + name + "\"");
}

void SimFabric::shutdown() {
  std::string died;
  {
    std::lock_guard lock(mu_);
    if (shut_down_) return;
    // Before anything is stopped: what died on its own while the test ran.
    died = unexpected_exits_locked();
    shutdown_locked();
  }
  if (died.empty()) return;
  ExitReporter reporter;
  {
    std::lock_guard lock(reporter_mutex());
    reporter = exit_reporter();
  }
  if (reporter) {
    reporter(died);
  } else {
    std::cerr << died;
  }
}

void SimFabric::shutdown_locked() {
  shut_down_ = true;
  // Clients first (they talk to ibsim), then the SM, then the simulator.
  for (Process& child : children_) child.kill(SIGTERM);
  for (Process& child : children_) child.terminate(milliseconds(2000));
  if (opensm_) opensm_->terminate(milliseconds(1000));
  if (ibsim_) ibsim_->terminate(milliseconds(1000));
  if (console_fd_ >= 0) {
    ::close(console_fd_);
    console_fd_ = -1;
  }
  if (!dir_.empty()) {
    const char* keep = std::getenv("IBFX_KEEP_SIM");
    if (keep != nullptr && std::string_view(keep) == "1") {
      std::cerr << "SimFabric: IBFX_KEEP_SIM=1, keeping " << dir_ << "\n";
    } else {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  unregister_instance(this);
}

std::map<std::string, int> parse_ibnetdiscover_lids(std::string_view output) {
  std::map<std::string, int> lids;
  std::string current;
  bool current_is_switch = false;
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t eol = output.find('\n', pos);
    if (eol == std::string_view::npos) eol = output.size();
    const std::string_view line = output.substr(pos, eol - pos);
    pos = eol + 1;
    const bool is_switch = line.starts_with("Switch");
    if (is_switch || line.starts_with("Ca") || line.starts_with("Rt")) {
      // Switch	8 "S-0000000000200000"		# "sw-01" base port 0 lid 2 lmc 0
      // Ca	1 "H-0000000000100004"		# "gpu0001 mlx5_1"
      current.clear();
      const std::size_t hash = line.find('#');
      const std::size_t q1 = hash == std::string_view::npos ? hash : line.find('"', hash);
      const std::size_t q2 = q1 == std::string_view::npos ? q1 : line.find('"', q1 + 1);
      if (q2 == std::string_view::npos) continue;
      current = std::string(line.substr(q1 + 1, q2 - q1 - 1));
      current_is_switch = is_switch;
      if (is_switch) {
        const std::size_t lid = line.find(" lid ", q2);
        if (lid != std::string_view::npos) lids[current] = parse_int_after(line, lid + 5);
      }
    } else if (line.starts_with("[") && !current.empty() && !current_is_switch &&
               !lids.contains(current)) {
      // [1](100005) 	"S-0000000000200000"[2]		# lid 4 lmc 0 "sw-01" lid 2 4xSDR
      const std::size_t hash = line.find('#');
      const std::size_t lid = hash == std::string_view::npos ? hash : line.find("lid ", hash);
      if (lid != std::string_view::npos) lids[current] = parse_int_after(line, lid + 4);
    }
  }
  return lids;
}

}  // namespace ibfx::test
