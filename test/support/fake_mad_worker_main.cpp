// A stand-in for the MAD worker (--mad-worker) in the tests of the daemon's
// side of its channels (test/unit/worker_transport_test.cpp): says it is
// ready on descriptor 4, then answers every MAD frame on descriptor 3 with
// the same MAD as a response, until the channel closes. No umad: it runs
// anywhere the unit tests run.
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

#include "base/child_process.h"
#include "mad/mad_frame.h"
#include "mad/worker_control.h"

namespace {

bool read_frame(int fd, ibfx::Frame& frame) {
  std::size_t got = 0;
  while (got < frame.size()) {
    const ssize_t n = ::read(fd, frame.data() + got, frame.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

int main() {
  ibfx::ReadyMessage ready;
  ready.ok = true;
  ready.ca = "fake0";
  ready.port = 1;
  ready.smp = true;
  ready.local.base_lid = 1;
  if (!ibfx::send_control(ibfx::kWorkerCtlFd, ibfx::ControlType::kReady,
                          ibfx::encode_ready(ready))) {
    return 1;
  }
  ibfx::Frame in{};
  ibfx::Frame out{};
  while (read_frame(ibfx::kWorkerMadFd, in)) {
    const ibfx::MadRequestFrame request = ibfx::decode_request_frame(in.data());
    ibfx::Received answer;
    answer.kind = ibfx::Received::Kind::kResponse;
    answer.mad = request.mad;
    ibfx::encode_received_frame(answer, out.data());
    const std::string_view bytes(reinterpret_cast<const char*>(out.data()), out.size());
    if (!ibfx::write_all(ibfx::kWorkerMadFd, bytes)) return 1;
  }
  return 0;
}
