#include "collectors/mad_worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "base/log.h"
#include "collectors/child_process.h"
#include "collectors/fabric.h"
#include "collectors/mad_frame.h"
#include "collectors/worker_control.h"

namespace ibfx {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// ---- parent side ------------------------------------------------------------------

struct MadWorker::Connection {
  Connection(pid_t p, int mad, int ctl) : pid(p), mad_fd(mad), ctl_fd(ctl) {}
  ~Connection() {
    ::close(mad_fd);
    ::close(ctl_fd);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const pid_t pid;
  const int mad_fd;
  const int ctl_fd;
  const Clock::time_point started = Clock::now();
  std::atomic<bool> dead{false};
  bool smp = false;     // set before the connection is published
  LocalPort local;      // likewise
  bool reaped = false;  // guarded by MadWorker::mu_; once true, pid may be reused
};

// Sends through whichever worker is current. Frames are buffered and
// written in batches (on receive() or when the buffer is large), so that a
// MAD costs a memcpy, not a system call.
class WorkerTransport final : public MadTransport {
 public:
  explicit WorkerTransport(MadWorker& worker) : worker_(worker) {}

  bool send(std::uint16_t lid, const MadBytes& mad, milliseconds timeout) override {
    refresh();
    if (!conn_ || conn_->dead.load(std::memory_order_relaxed)) return false;
    const std::size_t at = out_.size();
    out_.resize(at + kFrameSize);
    encode_request_frame(
        MadRequestFrame{lid, static_cast<std::uint32_t>(std::max<std::int64_t>(timeout.count(), 0)),
                        mad},
        out_.data() + at);
    if (out_.size() >= kFlushBytes) return flush();
    return true;
  }

  // Asked once per sweep and node: the flag the current worker's ready
  // message carried, not a round trip.
  bool supports_smp() const override { return worker_.supports_smp(); }

  Received receive(milliseconds wait) override {
    refresh();
    Received r;
    if (!conn_ || conn_->dead.load(std::memory_order_relaxed)) {
      // Nothing can arrive; waiting keeps the engine from spinning until its
      // requests expire.
      std::this_thread::sleep_for(std::min(wait, milliseconds(50)));
      return r;
    }
    // Answers already read come first, and requests queued meanwhile wait
    // for the next flush: the engine refills its window after every answer,
    // and this turns a batch of answers into one write of requests.
    if (pop(r)) return r;
    if (!out_.empty() && !flush()) return r;
    if (pop(r)) return r;  // flush() reads while the socket is full
    if (wait.count() > 0) {
      pollfd p{conn_->mad_fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return r;
    }
    if (fill()) pop(r);
    return r;
  }

 private:
  static constexpr std::size_t kFlushBytes = 64 * kFrameSize;

  void refresh() {
    const std::uint64_t gen = worker_.generation();
    if (gen == generation_) return;
    generation_ = gen;
    conn_ = worker_.current();
    out_.clear();
    in_pos_ = 0;
    in_end_ = 0;
  }

  void fail(const std::string& why) {
    out_.clear();
    worker_.broken(conn_, why);
  }

  // Reads whatever is there without blocking; false when the worker is gone.
  bool fill() {
    // Keep only the unparsed tail (at most a partial frame, or answers
    // flush() read early), so the buffer does not grow over a sweep.
    if (in_pos_ > 0) {
      std::memmove(in_.get(), in_.get() + in_pos_, in_end_ - in_pos_);
      in_end_ -= in_pos_;
      in_pos_ = 0;
    }
    for (;;) {
      // Grows only if flush() had to read while the worker's socket was
      // full; never zero-filled (this runs once per batch of answers).
      if (in_capacity_ - in_end_ < kReadChunk) {
        in_capacity_ = std::max(2 * in_capacity_, in_end_ + kReadChunk);
        auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(in_capacity_);
        std::memcpy(bigger.get(), in_.get(), in_end_);
        in_ = std::move(bigger);
      }
      const ssize_t n = ::recv(conn_->mad_fd, in_.get() + in_end_, kReadChunk, MSG_DONTWAIT);
      if (n > 0) {
        in_end_ += static_cast<std::size_t>(n);
        // A short read took everything there was: asking again would only
        // return EAGAIN, one more system call per batch.
        if (static_cast<std::size_t>(n) < kReadChunk) return true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      fail(n == 0 ? "closed its MAD channel" : std::string("MAD channel: ") + std::strerror(errno));
      return false;
    }
  }

  bool pop(Received& r) {
    while (in_end_ - in_pos_ >= kFrameSize) {
      const bool ok = decode_received_frame(in_.get() + in_pos_, r);
      in_pos_ += kFrameSize;
      if (ok) return true;
      r = Received{};
    }
    if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
    return false;
  }

  // Writes the buffered frames. While the socket is full, responses are
  // read meanwhile: the worker may be blocked writing to us.
  bool flush() {
    std::size_t off = 0;
    while (off < out_.size()) {
      const ssize_t n =
          ::send(conn_->mad_fd, out_.data() + off, out_.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{conn_->mad_fd, POLLIN | POLLOUT, 0};
        ::poll(&p, 1, 100);
        if ((p.revents & POLLIN) != 0 && !fill()) return false;
        if (conn_->dead.load(std::memory_order_relaxed)) {
          out_.clear();
          return false;
        }
        continue;
      }
      fail(std::string("MAD channel: ") + std::strerror(errno));
      return false;
    }
    out_.clear();
    return true;
  }

  MadWorker& worker_;
  std::uint64_t generation_ = 0;
  std::shared_ptr<MadWorker::Connection> conn_;
  std::vector<std::uint8_t> out_;
  static constexpr std::size_t kReadChunk = 128 * kFrameSize;
  std::size_t in_capacity_ = 2 * kReadChunk;
  std::unique_ptr<std::uint8_t[]> in_ =
      std::make_unique_for_overwrite<std::uint8_t[]>(in_capacity_);
  std::size_t in_pos_ = 0;  // next frame to parse
  std::size_t in_end_ = 0;  // end of the bytes read
};

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

std::shared_ptr<MadWorker::Connection> MadWorker::spawn(std::string& error) {
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
  const pid_t pid =
      spawn_child({options_.exe, "--mad-worker", "--ca=" + options_.ca,
                   "--ca-port=" + std::to_string(options_.ca_port),
                   "--log.level=" + options_.log_level, "--log.format=" + options_.log_format},
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
  auto reaped = [&] {
    std::lock_guard lock(mu_);
    starting_pid_ = -1;
    conn->reaped = true;
    conn->dead = true;
  };
  auto reap = [&](bool kill) {
    if (kill) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    reaped();
    return status;
  };
  // The worker may wait a long time to open the port (under the simulator
  // it waits for ibsim to come back): no deadline, but stop() cuts it short.
  for (;;) {
    bool stopping = false;
    {
      std::lock_guard lock(mu_);
      stopping = stopping_;
    }
    if (stopping) {
      error = "stopping";
      reap(true);
      return nullptr;
    }
    pollfd p{conn->ctl_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) break;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      reaped();
      error = "the MAD worker " + describe_status(status) + " before opening the port";
      return nullptr;
    }
  }
  ControlType type{};
  std::string payload;
  if (!read_control(conn->ctl_fd, type, payload) || type != ControlType::kReady) {
    error = "the MAD worker " + describe_status(reap(true)) + " before opening the port";
    return nullptr;
  }
  ReadyMessage ready;
  if (!decode_ready(payload, ready)) {
    error = "malformed ready message from the MAD worker";
    reap(true);
    return nullptr;
  }
  if (!ready.ok) {
    error = ready.error;
    reap(false);  // it exits by itself after saying why
    return nullptr;
  }
  conn->smp = ready.smp;
  conn->local = ready.local;
  const std::string& ca = ready.ca;
  const std::uint32_t port = ready.port;
  const std::string& why_no_smp = ready.why_no_smp;
  if (!conn->smp) {
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
  supervisor_ = std::thread([this] { supervise(); });
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
