// The MAD worker's side of the daemon: a worker that cannot start. Its
// channels have tests of their own: mad_frame_test, worker_control_test,
// worker_transport_test; the Fabric a discovery sends back, fabric_codec_test.
#include "mad/mad_worker.h"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

using namespace ibfx;

TEST_CASE("MAD worker: a worker that cannot start reports why", "[mad_worker]") {
  // /bin/false is not a worker: it exits before saying it is ready, and
  // start() must say so instead of hanging.
  MadWorkerOptions options;
  options.exe = "/bin/false";
  MadWorker worker(options);
  try {
    worker.start();
    FAIL("start() succeeded");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("before opening the port") != std::string::npos);
  }
  CHECK_FALSE(worker.up());
  CHECK(worker.pid() == -1);
}
