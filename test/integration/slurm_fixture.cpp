#include "slurm_fixture.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "loopback_service.h"

namespace ibfx::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string log_tail(const std::string& text, std::size_t bytes = 1500) {
  return text.size() <= bytes ? text : text.substr(text.size() - bytes);
}

bool eventually_true(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return pred();
}

}  // namespace

SlurmCluster::SlurmCluster(std::vector<std::string> nodes, std::string extra_config)
    : nodes_(std::move(nodes)) {
  char tmpl[] = "/tmp/ibfx-slurm-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  try {
    // slurmrestd runs as nobody: it must reach the munge socket and create
    // its own socket, and slurmd's jobs run in jobs/.
    ::chmod(dir_.c_str(), 0755);
    for (const char* sub : {"munge", "state", "spool", "log", "jobs"}) {
      fs::create_directories(dir_ + "/" + sub);
    }
    fs::create_directories(dir_ + "/rest");
    ::chmod((dir_ + "/rest").c_str(), 01777);
    for (const std::string& n : nodes_) fs::create_directories(dir_ + "/spool/" + n);
    munge_socket_ = dir_ + "/munge/munge.socket";
    rest_socket_ = dir_ + "/rest/slurmrestd.sock";
    {
      // A key of our own: munged refuses one readable by others.
      std::ofstream key(dir_ + "/munge/munge.key", std::ios::binary);
      std::ifstream random("/dev/urandom", std::ios::binary);
      char bytes[1024];
      random.read(bytes, sizeof bytes);
      key.write(bytes, sizeof bytes);
    }
    ::chmod((dir_ + "/munge/munge.key").c_str(), 0600);
    write_config(nodes_, extra_config);

    // -f: munged would refuse the socket dir otherwise (it is not
    // /run/munge, and it is searchable by nobody, which slurmrestd needs).
    start("munged",
          {"munged", "--foreground", "--force", "--socket=" + munge_socket_,
           "--key-file=" + dir_ + "/munge/munge.key", "--pid-file=" + dir_ + "/munge/munged.pid",
           "--log-file=" + dir_ + "/log/munged.log", "--seed-file=" + dir_ + "/munge/munged.seed"});
    if (!eventually_true([&] { return fs::exists(munge_socket_); }, 10s)) {
      throw std::runtime_error("munged did not create its socket");
    }
    // -i: no state from an earlier run (the state dir is new anyway).
    start("slurmctld", {"slurmctld", "-D", "-i", "-f", conf_});
    for (const std::string& n : nodes_)
      start("slurmd-" + n, {"slurmd", "-D", "-N", n, "-f", conf_});
    const bool idle = eventually_true(
        [&] {
          const RunResult r = run({"sinfo", "-h", "-N", "-o", "%N %t"});
          if (!r.ok()) return false;
          std::size_t ready = 0;
          std::istringstream in(r.out);
          std::string name;
          std::string state;
          while (in >> name >> state) ready += state == "idle" ? 1 : 0;
          return ready == nodes_.size();
        },
        30s);
    if (!idle) throw std::runtime_error("the Slurm nodes did not come up idle");
    // slurmrestd refuses to run as root; without -s it also loads the
    // accounting plugin, which needs a slurmdbd.
    start("slurmrestd",
          {"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "slurmrestd", "-s",
           "openapi/v0.0.38", "-a", "rest_auth/local", "unix:" + rest_socket_});
    if (!eventually_true([&] { return fs::exists(rest_socket_); }, 10s)) {
      throw std::runtime_error("slurmrestd did not create its socket");
    }
  } catch (const std::exception& e) {
    const std::string what = std::string(e.what()) + "\n" + logs();
    teardown();
    throw std::runtime_error(what);
  }
}

SlurmCluster::~SlurmCluster() { teardown(); }

void SlurmCluster::write_config(const std::vector<std::string>& nodes,
                                const std::string& extra_config) {
  conf_ = dir_ + "/slurm.conf";
  std::ofstream c(conf_);
  c << "ClusterName=ibfx\n"
    << "SlurmctldHost=localhost\n"
    << "SlurmctldPort=" << free_port() << "\n"
    << "AuthType=auth/munge\nCredType=cred/munge\n"
    << "AuthInfo=socket=" << munge_socket_ << "\n"
    << "SlurmUser=root\nSlurmdUser=root\n"
    << "StateSaveLocation=" << dir_ << "/state\n"
    << "SlurmdSpoolDir=" << dir_ << "/spool/%n\n"
    << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\n"
    << "SlurmdPidFile=" << dir_ << "/spool/slurmd.%n.pid\n"
    << "SlurmctldLogFile=" << dir_ << "/log/slurmctld.log\n"
    << "SlurmdLogFile=" << dir_
    << "/log/slurmd.%n.log\n"
    // No cgroups, no accounting: the jobs are plain children of slurmstepd.
    << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
    << "SelectType=select/linear\nSchedulerType=sched/builtin\nMpiDefault=none\n"
    << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
    << "SwitchType=switch/none\n"
    // The node's CPUs=1 is what it is, not what this machine has.
    << "SlurmdParameters=config_overrides\nReturnToService=2\n"
    << "InactiveLimit=0\nKillWait=1\nMinJobAge=2\nSlurmdTimeout=30\n";
  for (const std::string& n : nodes) {
    c << "NodeName=" << n << " NodeAddr=127.0.0.1 Port=" << free_port()
      << " CPUs=1 State=UNKNOWN\n";
  }
  c << "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n" << extra_config;
}

EnvMap SlurmCluster::env() const {
  return {{"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}, {"SLURM_CONF", conf_}};
}

Process& SlurmCluster::start(const std::string& name, std::vector<std::string> argv) {
  Process::Spec spec;
  spec.argv = std::move(argv);
  spec.env = env();
  spec.cwd = dir_;
  spec.stdout_path = dir_ + "/log/" + name + ".out";
  spec.stderr_path = dir_ + "/log/" + name + ".err";
  daemons_.emplace_back(name, Process::start(spec));
  return daemons_.back().second;
}

RunResult SlurmCluster::run(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout) const {
  static int seq = 0;
  const std::string base = dir_ + "/log/run" + std::to_string(++seq);
  Process::Spec spec;
  spec.argv = argv;
  spec.env = env();
  spec.cwd = dir_ + "/jobs";
  spec.stdout_path = base + ".out";
  spec.stderr_path = base + ".err";
  return Process::run(spec, timeout);
}

std::uint64_t SlurmCluster::submit(const std::string& name, const std::vector<std::string>& hosts) {
  std::string list;
  for (const std::string& h : hosts) list += (list.empty() ? "" : ",") + h;
  const RunResult r =
      run({"sbatch", "--parsable", "-N", std::to_string(hosts.size()), "-w", list, "-J", name, "-p",
           "gpu", "--chdir=" + dir_ + "/jobs", "--output=/dev/null", "--wrap", "sleep 600"});
  if (!r.ok()) throw std::runtime_error("sbatch failed: " + r.err + "\n" + logs());
  return std::stoull(r.out);
}

bool SlurmCluster::wait_state(std::uint64_t job, const std::string& state,
                              std::chrono::milliseconds timeout) {
  return eventually_true(
      [&] {
        const RunResult r = run({"squeue", "-h", "-j", std::to_string(job), "-o", "%T"});
        return r.ok() && r.out == state + "\n";
      },
      timeout);
}

bool SlurmCluster::wait_gone(std::uint64_t job, std::chrono::milliseconds timeout) {
  return eventually_true(
      [&] {
        // Once purged (MinJobAge), squeue says "Invalid job id" and fails.
        const RunResult r = run({"squeue", "-h", "-j", std::to_string(job), "-o", "%T"});
        return r.out.empty();
      },
      timeout);
}

void SlurmCluster::cancel(std::uint64_t job) {
  const RunResult r = run({"scancel", std::to_string(job)});
  if (!r.ok()) throw std::runtime_error("scancel failed: " + r.err);
}

void SlurmCluster::kill_slurmrestd() {
  for (auto& [name, process] : daemons_) {
    if (name == "slurmrestd") {
      process.kill(SIGKILL);
      process.wait(5s);
    }
  }
}

std::string SlurmCluster::logs() const {
  std::string out;
  for (const char* log : {"slurmctld.log", "slurmctld.err", "munged.log", "slurmrestd.err"}) {
    const std::string text = slurp(dir_ + "/log/" + log);
    if (!text.empty()) out += std::string("--- ") + log + ":\n" + log_tail(text) + "\n";
  }
  for (const std::string& n : nodes_) {
    const std::string text = slurp(dir_ + "/log/slurmd-" + n + ".err");
    if (!text.empty()) out += "--- slurmd " + n + ":\n" + log_tail(text, 600) + "\n";
  }
  return out;
}

void SlurmCluster::teardown() {
  if (dir_.empty()) return;
  bool controller = false;
  for (auto& [name, process] : daemons_) controller = controller || name == "slurmctld";
  if (controller) {
    // The jobs first, while slurmctld and the slurmds can still end them.
    run({"scancel", "--full", "--user=root"}, 5s);
    eventually_true([&] { return run({"squeue", "-h"}, 5s).out.empty(); }, 5s);
  }
  // Newest first: slurmrestd and the slurmds before slurmctld, munged last.
  for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) it->second.terminate(2000ms);
  daemons_.clear();
  // What slurmd forked away from itself (slurmstepd, the jobs' processes)
  // carries this cluster's SLURM_CONF or runs in its dir: nothing of it
  // may outlive the test.
  const std::string marker = "SLURM_CONF=" + conf_;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(pid) == ::getpid()) continue;
    std::error_code ec;
    const fs::path cwd = fs::read_symlink(entry.path() / "cwd", ec);
    const bool inside = !ec && cwd.string().rfind(dir_, 0) == 0;
    std::string environ = slurp(entry.path().string() + "/environ");
    const bool ours = environ.find(marker + '\0') != std::string::npos;
    if (inside || ours) ::kill(std::stoi(pid), SIGKILL);
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
  dir_.clear();
}

}  // namespace ibfx::test
