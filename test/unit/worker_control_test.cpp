// The MAD worker's control channel (mad/worker_control.h): the ready
// message's round trip, every malformed message refused, and messages over
// a socketpair as the worker and the daemon exchange them.
#include "mad/worker_control.h"

#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

using namespace ibfx;

namespace {

ReadyMessage sample() {
  ReadyMessage m;
  m.ok = true;
  m.ca = "mlx5_0";
  m.port = 1;
  m.smp = false;
  m.why_no_smp = "no QP0 access";
  m.local.node_guid = 0x0002c90300a1b2c3;
  m.local.port_guid = 0x0002c90300a1b2c4;
  m.local.base_lid = 0x1234;
  m.local.lmc = 2;
  m.local.sm_lid = 1;
  return m;
}

}  // namespace

TEST_CASE("Worker control: the ready message survives a round trip", "[worker_control]") {
  const ReadyMessage m = sample();
  ReadyMessage back;
  REQUIRE(decode_ready(encode_ready(m), back));
  CHECK(back.ok == m.ok);
  CHECK(back.ca == m.ca);
  CHECK(back.port == m.port);
  CHECK(back.error == m.error);
  CHECK(back.smp == m.smp);
  CHECK(back.why_no_smp == m.why_no_smp);
  CHECK(back.local == m.local);

  ReadyMessage failed;
  failed.error = "cannot open mlx5_0 port 1";
  REQUIRE(decode_ready(encode_ready(failed), back));
  CHECK_FALSE(back.ok);
  CHECK(back.error == failed.error);
}

TEST_CASE("Worker control: a truncated, padded or out-of-range ready message is refused",
          "[worker_control]") {
  const std::string bytes = encode_ready(sample());
  ReadyMessage back;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("truncated to " << n);
    CHECK_FALSE(decode_ready(bytes.substr(0, n), back));
  }
  CHECK_FALSE(decode_ready(bytes + "x", back));
  ReadyMessage wide = sample();
  wide.local.lmc = 8;  // LMC is 3 bits
  CHECK_FALSE(decode_ready(encode_ready(wide), back));
}

TEST_CASE("Worker control: messages cross a socketpair, and EOF ends the reading",
          "[worker_control]") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  REQUIRE(send_control(fds[0], ControlType::kReady, encode_ready(sample())));
  REQUIRE(send_control(fds[0], ControlType::kReady, ""));
  ControlType type{};
  std::string payload;
  REQUIRE(read_control(fds[1], type, payload));
  CHECK(type == ControlType::kReady);
  CHECK(payload == encode_ready(sample()));
  REQUIRE(read_control(fds[1], type, payload));
  CHECK(payload.empty());
  ::close(fds[0]);
  CHECK_FALSE(read_control(fds[1], type, payload));
  ::close(fds[1]);
}
