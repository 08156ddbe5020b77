// The daemon's side of the MAD channel (mad/worker_transport.h), against a
// stand-in worker (test/support/fake_mad_worker_main.cpp) that answers every
// MAD with itself: batches of requests cross and every answer comes back,
// and the transport follows the worker when it is replaced.
#include "mad/worker_transport.h"

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>

#include "mad/mad_worker.h"
#include "test/support/wait_for.h"

using namespace ibfx;
using namespace std::chrono_literals;

namespace {

MadWorkerOptions fake_worker() {
  MadWorkerOptions options;
  options.exe = IBFX_FAKE_MAD_WORKER_PATH;
  options.backoff_min = 50ms;
  options.backoff_max = 200ms;
  return options;
}

MadBytes request(std::uint64_t tid) {
  MadBytes mad{};
  build_pma_mad(mad, 0x01, kAttrPortCounters, 0, tid, port_counters_request(1));
  return mad;
}

// Sends `count` MADs with TIDs from `first`, and returns the TIDs answered.
std::set<std::uint64_t> exchange(MadTransport& transport, std::uint64_t first, int count) {
  for (int i = 0; i < count; ++i) {
    REQUIRE(transport.send(2, request(first + static_cast<std::uint64_t>(i)), 100ms));
  }
  std::set<std::uint64_t> answered;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (answered.size() < static_cast<std::size_t>(count) &&
         std::chrono::steady_clock::now() < until) {
    const Received r = transport.receive(50ms);
    if (r.kind == Received::Kind::kResponse) answered.insert(mad_tid(r.mad));
  }
  return answered;
}

}  // namespace

TEST_CASE("WorkerTransport: a batch of MADs crosses to the worker and every answer comes back",
          "[worker_transport]") {
  MadWorker worker(fake_worker());
  worker.start();
  std::unique_ptr<MadTransport> transport = worker.transport();
  CHECK(transport->supports_smp());  // the worker's ready message said so
  // More than one flush (64 frames) and one read chunk (128 frames).
  const std::set<std::uint64_t> answered = exchange(*transport, 1000, 300);
  CHECK(answered.size() == 300);
  CHECK(*answered.begin() == 1000);
  CHECK(*answered.rbegin() == 1299);
  // Nothing more to read: an empty receive, not a stale answer.
  CHECK(transport->receive(10ms).kind == Received::Kind::kNothing);
  worker.stop();
}

TEST_CASE("WorkerTransport follows the worker that replaces a dead one", "[worker_transport]") {
  MadWorker worker(fake_worker());
  worker.start();
  std::unique_ptr<MadTransport> transport = worker.transport();
  REQUIRE(exchange(*transport, 1, 10).size() == 10);
  const std::uint64_t generation = worker.generation();
  ::kill(worker.pid(), SIGKILL);
  REQUIRE(test::wait_for([&] { return worker.up() && worker.generation() > generation; }));
  CHECK(worker.restarts() == 1);
  // The new worker's channel, not the dead one's.
  CHECK(exchange(*transport, 100, 10).size() == 10);
  worker.stop();
}
