// The MAD channel between the daemon and its MAD worker
// (mad/mad_worker.h): fixed-size frames on a SOCK_STREAM socketpair,
// little-endian headers, the MAD itself verbatim.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "mad/mad_transport.h"

namespace ibfx {

// Parent -> worker: {u16 lid, u16 0, u32 timeout_ms, MAD}.
// Worker -> parent: {u8 kind (Received::Kind), 7 x 0, MAD}.
inline constexpr std::size_t kFrameHeader = 8;
inline constexpr std::size_t kFrameSize = kFrameHeader + kMadSize;
using Frame = std::array<std::uint8_t, kFrameSize>;

struct MadRequestFrame {
  std::uint16_t lid = 0;
  std::uint32_t timeout_ms = 0;
  MadBytes mad{};
};
void encode_request_frame(const MadRequestFrame& request, std::uint8_t* out);
MadRequestFrame decode_request_frame(const std::uint8_t* in);
void encode_received_frame(const Received& received, std::uint8_t* out);
// False for a kind that is neither a response nor a send failure.
bool decode_received_frame(const std::uint8_t* in, Received& received);

// Little-endian integers of `bytes` bytes, as the frames and the control
// messages (mad/worker_control.h) carry them.
void put_le(std::uint8_t* out, std::uint64_t v, std::size_t bytes);
std::uint64_t get_le(const std::uint8_t* in, std::size_t bytes);

}  // namespace ibfx
