// The control channel between the daemon and its MAD worker
// (mad/mad_worker.h): length-prefixed messages on a SOCK_STREAM
// socketpair, beside the MAD channel's frames (mad/mad_frame.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mad/mad_transport.h"

namespace ibfx {

// {u32 type, u32 length, payload}.
// The worker says once that it is ready, then the parent only watches the
// channel for EOF (the worker's death).
enum class ControlType : std::uint32_t {
  // worker -> parent: {u8 ok, str ca, u32 port, str error, u8 smp,
  // str why_no_smp, u64 node_guid, u64 port_guid, u32 base_lid, u32 lmc,
  // u32 sm_lid}
  kReady = 1,
};
inline constexpr std::size_t kMaxControlPayload = std::size_t{1} << 30;

// Where the worker finds its two channels: the parent places the socketpairs'
// ends on these descriptors before exec.
inline constexpr int kWorkerMadFd = 3;
inline constexpr int kWorkerCtlFd = 4;

// The worker's one control message (ControlType::kReady), written and read
// in one place each.
struct ReadyMessage {
  bool ok = false;
  std::string ca;
  std::uint32_t port = 0;
  std::string error;  // why the port could not be opened (!ok)
  bool smp = false;
  std::string why_no_smp;
  LocalPort local;
};

std::string encode_ready(const ReadyMessage& m);
// False for a truncated, oversized or trailing-garbage message.
bool decode_ready(std::string_view in, ReadyMessage& m);

// One message; false when the peer is gone. read_control blocks.
bool send_control(int fd, ControlType type, std::string_view payload);
bool read_control(int fd, ControlType& type, std::string& payload);

}  // namespace ibfx
