#include "mad/mad_worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "base/child_process.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "fabric/fabric.h"
#include "mad/mad_frame.h"
#include "mad/worker_connection.h"
#include "mad/worker_control.h"
#include "mad/worker_transport.h"

namespace ibfx {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// ---- parent side ------------------------------------------------------------------

MadWorker::MadWorker(MadWorkerOptions options) : options_(std::move(options)) {}

MadWorker::~MadWorker() { stop(); }

std::shared_ptr<MadWorker::Connection> MadWorker::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

pid_t MadWorker::pid() const {
  std::lock_guard lock(mu_);
  return current_ ? current_->pid : -1;
}

std::unique_ptr<MadTransport> MadWorker::transport() {
  return std::make_unique<WorkerTransport>(*this);
}

std::shared_ptr<MadWorker::Connection> MadWorker::launch(std::string& error) {
  int mad[2];
  int ctl[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, mad) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return nullptr;
  }
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    ::close(mad[0]);
    ::close(mad[1]);
    return nullptr;
  }
  // The MAD channel becomes the worker's descriptor 3, the control channel 4
  // (kWorkerMadFd, kWorkerCtlFd).
  const pid_t pid = spawn_child(
      child_args(options_.exe, "--mad-worker",
                 {options_.ca, options_.ca_port, options_.log_level, options_.log_format}),
      {mad[1], ctl[1]}, false);
  ::close(mad[1]);
  ::close(ctl[1]);
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    ::close(mad[0]);
    ::close(ctl[0]);
    return nullptr;
  }
  auto conn = std::make_shared<Connection>(pid, mad[0], ctl[0]);
  {
    std::lock_guard lock(mu_);
    starting_pid_ = pid;
  }
  return conn;
}

void MadWorker::reaped_starting(Connection& conn) {
  std::lock_guard lock(mu_);
  starting_pid_ = -1;
  conn.reaped = true;
  conn.dead = true;
}

int MadWorker::reap_starting(Connection& conn, bool kill) {
  if (kill) ::kill(conn.pid, SIGKILL);
  int status = 0;
  while (::waitpid(conn.pid, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_starting(conn);
  return status;
}

// The worker may wait a long time to open the port (under the simulator
// it waits for ibsim to come back): no deadline, but stop() cuts it short.
bool MadWorker::await_control(Connection& conn, std::string& error) {
  for (;;) {
    bool stopping = false;
    {
      std::lock_guard lock(mu_);
      stopping = stopping_;
    }
    if (stopping) {
      error = "stopping";
      reap_starting(conn, true);
      return false;
    }
    pollfd p{conn.ctl_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) return true;
    int status = 0;
    if (::waitpid(conn.pid, &status, WNOHANG) == conn.pid) {
      reaped_starting(conn);
      error = "the MAD worker " + describe_status(status) + " before opening the port";
      return false;
    }
  }
}

bool MadWorker::read_ready(Connection& conn, ReadyMessage& ready, std::string& error) {
  ControlType type{};
  std::string payload;
  if (!read_control(conn.ctl_fd, type, payload) || type != ControlType::kReady) {
    error =
        "the MAD worker " + describe_status(reap_starting(conn, true)) + " before opening the port";
    return false;
  }
  if (!decode_ready(payload, ready)) {
    error = "malformed ready message from the MAD worker";
    reap_starting(conn, true);
    return false;
  }
  if (!ready.ok) {
    error = ready.error;
    reap_starting(conn, false);  // it exits by itself after saying why
    return false;
  }
  return true;
}

void MadWorker::adopt_ready(Connection& conn, const ReadyMessage& ready) {
  conn.smp = ready.smp;
  conn.local = ready.local;
  const std::string& ca = ready.ca;
  const std::uint32_t port = ready.port;
  const std::string& why_no_smp = ready.why_no_smp;
  if (!conn.smp) {
    std::lock_guard lock(mu_);
    // Once per daemon: every respawn would say the same.
    if (!smp_reason_logged_) {
      smp_reason_logged_ = true;
      log_warn("no Subnet Management (QP0) agent on " + ca + " port " + std::to_string(port) +
               ": " + why_no_smp +
               "; the sweep cannot confirm who answers at a LID, so after the SM moves LIDs "
               "readings may be misattributed until the next discovery");
    }
  }
  {
    std::lock_guard lock(mu_);
    starting_pid_ = -1;
    if (ca_name_.empty()) {
      ca_name_ = ca;
      ca_port_ = static_cast<int>(port);
    }
  }
}

std::shared_ptr<MadWorker::Connection> MadWorker::spawn(std::string& error) {
  auto conn = launch(error);
  if (!conn || !await_control(*conn, error)) return nullptr;
  ReadyMessage ready;
  if (!read_ready(*conn, ready, error)) return nullptr;
  adopt_ready(*conn, ready);
  return conn;
}

void MadWorker::start() {
  std::string error;
  auto conn = spawn(error);
  if (!conn) throw std::runtime_error(error);
  {
    std::lock_guard lock(mu_);
    smp_ = conn->smp;
    local_ = conn->local;
    current_ = std::move(conn);
    generation_ = 1;
    up_ = true;
    // Respawns open the port the first worker resolved, not "the first CA".
    options_.ca = ca_name_;
    options_.ca_port = ca_port_;
  }
  log_debug("MAD worker started (pid " + std::to_string(pid()) + "), sweep LID check " +
            (smp_ ? "on" : "off"));
  const LocalPort local = local_port();
  log_info("MAD worker on " + ca_name_ + " port " + std::to_string(ca_port_) + ": LID " +
           std::to_string(local.base_lid) + ", node " + guid_hex(local.node_guid) +
           ", master SM at LID " + std::to_string(local.sm_lid));
  supervisor_ = std::thread([this] {
    set_thread_name("ibfx-worker-sup");
    supervise();
  });
}

void MadWorker::supervise() {
  milliseconds backoff = options_.backoff_min;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (current_) {
      cv_.wait_for(lock, milliseconds(100));
      if (stopping_) break;
      const auto conn = current_;
      int status = 0;
      if (::waitpid(conn->pid, &status, WNOHANG) != conn->pid) continue;
      conn->reaped = true;
      retire_current();
      // A worker that lived a while gets a quick replacement; one that dies
      // right after starting backs off.
      backoff = Clock::now() - conn->started > std::chrono::seconds(10)
                    ? options_.backoff_min
                    : std::min(backoff * 2, options_.backoff_max);
      log_warn("MAD worker (pid " + std::to_string(conn->pid) + ") " + describe_status(status) +
               "; starting another in " + std::to_string(backoff.count()) + " ms");
      continue;
    }
    if (cv_.wait_for(lock, backoff, [this] { return stopping_; })) break;
    lock.unlock();
    std::string error;
    auto conn = spawn(error);
    lock.lock();
    if (!conn) {
      if (stopping_) break;
      backoff = std::min(backoff * 2, options_.backoff_max);
      log_warn("MAD worker did not start: " + error + "; retrying in " +
               std::to_string(backoff.count()) + " ms");
      continue;
    }
    smp_ = conn->smp;
    local_ = conn->local;
    current_ = std::move(conn);
    ++restarts_;
    ++generation_;
    up_ = true;
    log_info("MAD worker restarted (pid " + std::to_string(current_->pid) + ", restart " +
             std::to_string(restarts_.load()) + ")");
  }
}

void MadWorker::broken(const std::shared_ptr<Connection>& conn, const std::string& why) {
  if (!conn) return;
  std::lock_guard lock(mu_);
  if (conn->dead.exchange(true)) return;
  log_warn("MAD worker (pid " + std::to_string(conn->pid) + ") " + why + "; replacing it");
  if (!conn->reaped) ::kill(conn->pid, SIGKILL);
  if (conn == current_) up_ = false;
  cv_.notify_all();
}

void MadWorker::after_sweep(std::uint64_t mads_sent, std::uint64_t mads_answered) {
  // Sends to a worker that is down fail at once: nothing to kill then.
  if (mads_sent == 0 || mads_answered > 0 || !up_) {
    silent_sweeps_ = 0;
    return;
  }
  if (++silent_sweeps_ < options_.wedged_sweeps) return;
  silent_sweeps_ = 0;
  broken(current(), "answered none of " + std::to_string(mads_sent) + " MADs in " +
                        std::to_string(options_.wedged_sweeps) + " consecutive sweeps");
}

LocalPort MadWorker::local_port() const {
  std::lock_guard lock(mu_);
  return local_;
}

void MadWorker::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    if (current_ && !current_->reaped) ::kill(current_->pid, SIGKILL);
    if (starting_pid_ > 0) ::kill(starting_pid_, SIGKILL);
    cv_.notify_all();
  }
  if (supervisor_.joinable()) supervisor_.join();
  std::lock_guard lock(mu_);
  if (current_) {
    if (!current_->reaped) {
      while (::waitpid(current_->pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      current_->reaped = true;
    }
    retire_current();
  }
  up_ = false;
}

void MadWorker::retire_current() {
  current_->dead = true;
  // Wake anyone blocked on its channels: they see EOF now.
  ::shutdown(current_->mad_fd, SHUT_RDWR);
  ::shutdown(current_->ctl_fd, SHUT_RDWR);
  current_.reset();
  up_ = false;
}

}  // namespace ibfx
