// The MAD channel's frames (mad/mad_frame.h): requests and answers cross it
// unchanged, the header is the little-endian layout the worker reads, and a
// frame that is no answer is refused.
#include "mad/mad_frame.h"

#include <catch2/catch.hpp>
#include <cstdint>

using namespace ibfx;

TEST_CASE("MAD frames: requests and answers cross the channel unchanged", "[mad_frame]") {
  MadRequestFrame request;
  request.lid = 0xbeef;
  request.timeout_ms = 250;
  for (std::size_t i = 0; i < kMadSize; ++i) request.mad[i] = static_cast<std::uint8_t>(i * 7);
  Frame f{};
  encode_request_frame(request, f.data());
  const MadRequestFrame back = decode_request_frame(f.data());
  CHECK(back.lid == request.lid);
  CHECK(back.timeout_ms == request.timeout_ms);
  CHECK(back.mad == request.mad);

  for (auto kind : {Received::Kind::kResponse, Received::Kind::kSendFailed}) {
    Received r;
    r.kind = kind;
    r.mad = request.mad;
    encode_received_frame(r, f.data());
    Received out;
    REQUIRE(decode_received_frame(f.data(), out));
    CHECK(out.kind == kind);
    CHECK(out.mad == r.mad);
  }
  // "Nothing" is never sent; a frame that says so (or anything unknown) is
  // refused rather than handed to the engine.
  f[0] = static_cast<std::uint8_t>(Received::Kind::kNothing);
  Received out;
  CHECK_FALSE(decode_received_frame(f.data(), out));
  f[0] = 77;
  CHECK_FALSE(decode_received_frame(f.data(), out));
}

TEST_CASE("MAD frames: the request header is {u16 lid, u16 0, u32 timeout_ms}, little-endian",
          "[mad_frame]") {
  MadRequestFrame request;
  request.lid = 0x1234;
  request.timeout_ms = 0x0a0b0c0d;
  request.mad[0] = 0x81;
  request.mad[kMadSize - 1] = 0x7e;
  Frame f{};
  f.fill(0xff);
  encode_request_frame(request, f.data());
  CHECK(f[0] == 0x34);
  CHECK(f[1] == 0x12);
  CHECK(f[2] == 0);
  CHECK(f[3] == 0);
  CHECK(f[4] == 0x0d);
  CHECK(f[5] == 0x0c);
  CHECK(f[6] == 0x0b);
  CHECK(f[7] == 0x0a);
  CHECK(f[kFrameHeader] == 0x81);
  CHECK(f[kFrameSize - 1] == 0x7e);
}

TEST_CASE("MAD frames: an answer's header is its kind and seven zero bytes", "[mad_frame]") {
  Received r;
  r.kind = Received::Kind::kSendFailed;
  Frame f{};
  f.fill(0xff);
  encode_received_frame(r, f.data());
  CHECK(f[0] == static_cast<std::uint8_t>(Received::Kind::kSendFailed));
  for (std::size_t i = 1; i < kFrameHeader; ++i) CHECK(f[i] == 0);
}

TEST_CASE("put_le and get_le: little-endian integers of any width", "[mad_frame]") {
  std::uint8_t b[8] = {};
  put_le(b, 0x0102030405060708, 8);
  CHECK(b[0] == 0x08);
  CHECK(b[7] == 0x01);
  CHECK(get_le(b, 8) == 0x0102030405060708);
  CHECK(get_le(b, 2) == 0x0708);
  put_le(b, 0xabcdef, 3);
  CHECK(get_le(b, 3) == 0xabcdef);
  CHECK(b[3] == 0x05);  // only `bytes` bytes are written
}
