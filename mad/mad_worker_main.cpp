// The MAD worker process's main() (mad/mad_worker.h): opens the umad
// port, says so on the control channel, then relays MADs between the MAD
// channel and the port until the parent goes away.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "base/child_process.h"
#include "base/log.h"
#include "mad/mad_frame.h"
#include "mad/mad_worker.h"
#include "mad/worker_control.h"

namespace ibfx {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Frames as write_all() takes them.
template <class Bytes>
std::string_view bytes(const Bytes& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Answers go to the parent in batches: one write, and one wake-up of the
// daemon, per batch rather than per MAD. Answers arrive one at a time (a
// PMA, or ibsim, answers as it goes), so after the first one the receiver
// pauses briefly to let a batch gather. The pause costs each MAD at most
// kGather of latency, which the engine's in-flight window hides; per-MAD
// writes and wake-ups cost the simulator half its CPU on a 2-core machine
// (perf during bench/run 512: the worker and the daemon took 68 % of the
// CPU time, ibsim 22 %).
constexpr int kBatchFrames = 64;
constexpr auto kGather = std::chrono::microseconds(100);

// The umad port the flags name; null, and the parent told why, when it
// cannot be opened.
std::unique_ptr<UmadTransport> open_port(const ChildFlags& flags) {
  try {
    return std::make_unique<UmadTransport>(flags.ca, flags.ca_port);
  } catch (const std::exception& e) {
    ReadyMessage failed;
    failed.error = e.what();
    send_control(kWorkerCtlFd, ControlType::kReady, encode_ready(failed));
    return nullptr;
  }
}

// Tells the parent the port is open, and what it is; false when the parent
// is gone.
bool announce_ready(UmadTransport& transport) {
  ReadyMessage ready;
  ready.ok = true;
  ready.ca = transport.ca_name();
  ready.port = static_cast<std::uint32_t>(transport.ca_port());
  ready.smp = transport.supports_smp();
  ready.why_no_smp = transport.smp_error();
  ready.local = transport.local_port();
  if (!send_control(kWorkerCtlFd, ControlType::kReady, encode_ready(ready))) return false;
  log_debug("MAD worker " + std::to_string(::getpid()) + " ready on " + transport.ca_name() +
            " port " + std::to_string(transport.ca_port()));
  return true;
}

// The receiver thread: the port's answers to the parent, in batches of up
// to kBatchFrames.
[[noreturn]] void relay_answers(UmadTransport& transport, std::mutex& write_mu) {
  std::vector<std::uint8_t> batch;
  batch.reserve(kBatchFrames * kFrameSize);
  auto add = [&batch](const Received& r) {
    batch.resize(batch.size() + kFrameSize);
    encode_received_frame(r, batch.data() + batch.size() - kFrameSize);
  };
  // Takes whatever has arrived, up to a full batch.
  auto drain = [&] {
    while (batch.size() < kBatchFrames * kFrameSize) {
      const Received r = transport.receive(milliseconds(0));
      if (r.kind == Received::Kind::kNothing) return;
      add(r);
    }
  };
  for (;;) {
    const auto t0 = Clock::now();
    const Received first = transport.receive(milliseconds(1000));
    if (first.kind == Received::Kind::kNothing) {
      // An immediate error (a device that went away): do not spin.
      if (Clock::now() - t0 < milliseconds(1)) std::this_thread::sleep_for(milliseconds(10));
      continue;
    }
    batch.clear();
    add(first);
    drain();
    if (batch.size() < kBatchFrames * kFrameSize) {
      std::this_thread::sleep_for(kGather);
      drain();
    }
    std::lock_guard lock(write_mu);
    if (!write_all(kWorkerMadFd, bytes(batch))) ::_exit(0);
  }
}

// The control channel carries nothing after the ready message; its EOF
// means the parent is gone.
[[noreturn]] void watch_parent() {
  for (;;) {
    char c;
    const ssize_t n = ::recv(kWorkerCtlFd, &c, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(0);
  }
}

// The parent's requests to the port. Requests arrive in the parent's
// batches: read as many as are there.
[[noreturn]] void relay_requests(UmadTransport& transport, std::mutex& write_mu) {
  auto write_frame = [&](const Received& r) {
    Frame f;
    encode_received_frame(r, f.data());
    std::lock_guard lock(write_mu);
    if (!write_all(kWorkerMadFd, bytes(f))) ::_exit(0);
  };
  std::vector<std::uint8_t> in(kBatchFrames * kFrameSize);
  std::size_t have = 0;
  for (;;) {
    const ssize_t n = ::read(kWorkerMadFd, in.data() + have, in.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(0);
    have += static_cast<std::size_t>(n);
    std::size_t at = 0;
    for (; have - at >= kFrameSize; at += kFrameSize) {
      const MadRequestFrame request = decode_request_frame(in.data() + at);
      if (!transport.send(request.lid, request.mad, milliseconds(request.timeout_ms))) {
        // Told to the engine as the kernel would: the request comes back.
        Received failed;
        failed.kind = Received::Kind::kSendFailed;
        failed.mad = request.mad;
        write_frame(failed);
      }
    }
    std::memmove(in.data(), in.data() + at, have - at);
    have -= at;
  }
}

}  // namespace

bool is_mad_worker_invocation(int argc, char** argv) {
  return argc >= 2 && std::string_view(argv[1]) == "--mad-worker";
}

int run_mad_worker(int argc, char** argv) {
  const ChildFlags flags = parse_child_flags(argc, argv);
  become_child(flags);
  const std::unique_ptr<UmadTransport> transport = open_port(flags);
  if (!transport) return 1;
  if (!announce_ready(*transport)) return 0;
  // _exit: the other threads are blocked in umad/socket calls; the parent
  // is gone or replacing us, so there is nothing to flush or join.
  std::mutex write_mu;
  std::thread receiver([&] { relay_answers(*transport, write_mu); });
  std::thread control(watch_parent);
  relay_requests(*transport, write_mu);
}

}  // namespace ibfx
