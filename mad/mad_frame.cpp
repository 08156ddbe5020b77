#include "mad/mad_frame.h"

#include <cstring>

namespace ibfx {

void put_le(std::uint8_t* out, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint64_t get_le(const std::uint8_t* in, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return v;
}

void encode_request_frame(const MadRequestFrame& request, std::uint8_t* out) {
  put_le(out, request.lid, 2);
  put_le(out + 2, 0, 2);
  put_le(out + 4, request.timeout_ms, 4);
  std::memcpy(out + kFrameHeader, request.mad.data(), kMadSize);
}

MadRequestFrame decode_request_frame(const std::uint8_t* in) {
  MadRequestFrame r;
  r.lid = static_cast<std::uint16_t>(get_le(in, 2));
  r.timeout_ms = static_cast<std::uint32_t>(get_le(in + 4, 4));
  std::memcpy(r.mad.data(), in + kFrameHeader, kMadSize);
  return r;
}

void encode_received_frame(const Received& received, std::uint8_t* out) {
  std::memset(out, 0, kFrameHeader);
  out[0] = static_cast<std::uint8_t>(received.kind);
  std::memcpy(out + kFrameHeader, received.mad.data(), kMadSize);
}

bool decode_received_frame(const std::uint8_t* in, Received& received) {
  const auto kind = static_cast<Received::Kind>(in[0]);
  if (kind != Received::Kind::kResponse && kind != Received::Kind::kSendFailed) return false;
  received.kind = kind;
  std::memcpy(received.mad.data(), in + kFrameHeader, kMadSize);
  return true;
}

}  // namespace ibfx
