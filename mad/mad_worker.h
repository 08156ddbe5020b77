// The MAD worker: a child process (this executable, re-executed with
// --mad-worker) that owns the umad port the sweep talks through: PMA
// (class 0x04) and, where QP0 is accessible, Subnet Management (class 0x01)
// for the sweep's LID check. The daemon process never opens a umad device.
// Discovery runs in a process of its own (discovery/discovery_process.h).
//
// Why a process: a umad client that lost its device cannot get it back. An
// HCA reset or driver reload invalidates the open port, and under the
// simulator umad2sim connects to ibsim once per process and never again. A
// new process can; the daemon keeps its accumulated counters, its snapshot
// and its HTTP listener while the worker is replaced.
//
//   parent (daemon)                      worker (--mad-worker)
//   WorkerTransport --MAD channel-->     umad_send   (main thread)
//                   <--MAD channel--     umad_recv   (receiver thread)
//   MadWorker::spawn <--control--        ready message (once)
//
// Both channels are SOCK_STREAM socketpairs. The MAD channel carries
// fixed-size frames (kFrameSize bytes, mad/mad_frame.h), the control
// channel length-prefixed messages (mad/worker_control.h). The
// worker's main() is in mad_worker_main.cpp, the parent's side here. Worker death is seen as
// EOF/EPIPE and by waitpid(); the supervisor thread respawns it with capped backoff, and kills a
// worker that answers nothing for several sweeps (wedged on a dead device).
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mad/mad_frame.h"
#include "mad/mad_transport.h"

namespace ibfx {

struct ReadyMessage;  // mad/worker_control.h

// ---- worker side ----------------------------------------------------------
// True when argv asks for the worker mode (argv[1] == "--mad-worker").
bool is_mad_worker_invocation(int argc, char** argv);
// The worker's main(); returns its exit status.
int run_mad_worker(int argc, char** argv);

// ---- parent side ------------------------------------------------------------
struct MadWorkerOptions {
  std::string exe = "/proc/self/exe";
  std::string ca;  // empty: the first CA with an active port, as umad picks it
  int ca_port = 0;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  // Consecutive sweeps that sent MADs and got no answer at all before the
  // worker is killed and replaced.
  int wedged_sweeps = 2;
  std::chrono::milliseconds backoff_min{500};
  std::chrono::milliseconds backoff_max{5000};
};

class MadWorker final : public TransportHealth {
 public:
  explicit MadWorker(MadWorkerOptions options);
  ~MadWorker() override;
  MadWorker(const MadWorker&) = delete;
  MadWorker& operator=(const MadWorker&) = delete;

  // Spawns the first worker and waits until it has opened the CA port.
  // Throws std::runtime_error with the worker's reason (start-up only).
  void start();
  // Kills and reaps the worker; no respawn after this. Idempotent.
  void stop();

  // The name and port the first worker opened (resolved when --ca is empty).
  const std::string& ca_name() const { return ca_name_; }
  int ca_port() const { return ca_port_; }

  // A transport that sends through whichever worker is current.
  std::unique_ptr<MadTransport> transport();
  // Whether the latest worker registered a Subnet Management agent (its
  // UmadTransport::supports_smp()); false until one is ready.
  bool supports_smp() const { return smp_.load(); }

  bool up() const override { return up_.load(); }
  std::uint64_t generation() const override { return generation_.load(); }
  std::uint64_t restarts() const override { return restarts_.load(); }
  void after_sweep(std::uint64_t mads_sent, std::uint64_t mads_answered) override;
  // What the latest worker's port said about itself when it opened.
  LocalPort local_port() const override;

  pid_t pid() const;  // -1 when there is none

  struct Connection;

 private:
  friend class WorkerTransport;
  std::shared_ptr<Connection> current() const;
  // A channel failed (EOF, EPIPE, timeout): kill the worker; the supervisor
  // reaps it and starts another.
  void broken(const std::shared_ptr<Connection>& conn, const std::string& why);
  // Spawns a worker and waits for its ready message; null and `error` set
  // when it could not open the port or died first.
  std::shared_ptr<Connection> spawn(std::string& error);
  // spawn's steps. Starts the worker process on two new socket pairs.
  std::shared_ptr<Connection> launch(std::string& error);
  // Waits until the worker says something on its control channel; false
  // (and the worker reaped) when it died first or stop() was called.
  bool await_control(Connection& conn, std::string& error);
  // The worker's ready message; false, the worker reaped, when it is not one
  // or says the port could not be opened.
  bool read_ready(Connection& conn, ReadyMessage& ready, std::string& error);
  // The worker's SMP agent, local port and CA into the connection and here.
  void adopt_ready(Connection& conn, const ReadyMessage& ready);
  // The worker being started has been reaped: its pid may be reused.
  void reaped_starting(Connection& conn);
  // Reaps the worker being started (killed first if `kill`): its status.
  int reap_starting(Connection& conn, bool kill);
  void supervise();
  // Under mu_, with the current worker reaped: marks it dead, wakes whoever
  // waits on its channels, and forgets it.
  void retire_current();

  MadWorkerOptions options_;
  std::string ca_name_;
  int ca_port_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Connection> current_;
  pid_t starting_pid_ = -1;  // a worker being spawned, for stop()
  bool stopping_ = false;
  std::atomic<bool> up_{false};
  std::atomic<bool> smp_{false};
  LocalPort local_;                 // guarded by mu_
  bool smp_reason_logged_ = false;  // guarded by mu_
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint64_t> restarts_{0};
  int silent_sweeps_ = 0;  // sweep thread only
  std::thread supervisor_;
};

}  // namespace ibfx
