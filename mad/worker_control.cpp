#include "mad/worker_control.h"

#include <sys/socket.h>

#include <cerrno>

#include "base/child_process.h"
#include "mad/mad_frame.h"

namespace ibfx {

namespace {

// Blocking; false at EOF or on an error.
bool read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void put_u32(std::string& out, std::uint32_t v) {
  std::uint8_t b[4];
  put_le(b, v, 4);
  out.append(reinterpret_cast<const char*>(b), 4);
}
void put_str(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}
bool get_u32(std::string_view& in, std::uint32_t& v) {
  if (in.size() < 4) return false;
  v = static_cast<std::uint32_t>(get_le(reinterpret_cast<const std::uint8_t*>(in.data()), 4));
  in.remove_prefix(4);
  return true;
}
void put_u64(std::string& out, std::uint64_t v) {
  put_u32(out, static_cast<std::uint32_t>(v));
  put_u32(out, static_cast<std::uint32_t>(v >> 32));
}
bool get_u64(std::string_view& in, std::uint64_t& v) {
  std::uint32_t low = 0, high = 0;
  if (!get_u32(in, low) || !get_u32(in, high)) return false;
  v = (std::uint64_t{high} << 32) | low;
  return true;
}
bool get_str(std::string_view& in, std::string& s) {
  std::uint32_t n = 0;
  if (!get_u32(in, n) || n > in.size()) return false;
  s.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

}  // namespace

bool send_control(int fd, ControlType type, std::string_view payload) {
  std::uint8_t header[8];
  put_le(header, static_cast<std::uint32_t>(type), 4);
  put_le(header + 4, payload.size(), 4);
  std::string message(reinterpret_cast<const char*>(header), sizeof(header));
  message += payload;
  return write_all(fd, message);
}

bool read_control(int fd, ControlType& type, std::string& payload) {
  std::uint8_t header[8];
  if (!read_all(fd, header, sizeof(header))) return false;
  type = static_cast<ControlType>(get_le(header, 4));
  const std::size_t size = get_le(header + 4, 4);
  if (size > kMaxControlPayload) return false;
  payload.resize(size);
  return size == 0 || read_all(fd, payload.data(), size);
}

std::string encode_ready(const ReadyMessage& m) {
  std::string out(1, m.ok ? '\1' : '\0');
  put_str(out, m.ca);
  put_u32(out, m.port);
  put_str(out, m.error);
  out += m.smp ? '\1' : '\0';
  put_str(out, m.why_no_smp);
  put_u64(out, m.local.node_guid);
  put_u64(out, m.local.port_guid);
  put_u32(out, m.local.base_lid);
  put_u32(out, m.local.lmc);
  put_u32(out, m.local.sm_lid);
  return out;
}

bool decode_ready(std::string_view in, ReadyMessage& m) {
  auto get_flag = [&in](bool& flag) {
    if (in.empty()) return false;
    flag = in[0] == 1;
    in.remove_prefix(1);
    return true;
  };
  std::uint32_t base_lid = 0, lmc = 0, sm_lid = 0;
  if (!get_flag(m.ok) || !get_str(in, m.ca) || !get_u32(in, m.port) || !get_str(in, m.error) ||
      !get_flag(m.smp) || !get_str(in, m.why_no_smp) || !get_u64(in, m.local.node_guid) ||
      !get_u64(in, m.local.port_guid) || !get_u32(in, base_lid) || !get_u32(in, lmc) ||
      !get_u32(in, sm_lid)) {
    return false;
  }
  // LIDs are 16 bits, LMC 3 (IBA 14.2.5.6): anything wider is not a LID.
  if (base_lid > 0xFFFF || lmc > 7 || sm_lid > 0xFFFF || !in.empty()) return false;
  m.local.base_lid = static_cast<std::uint16_t>(base_lid);
  m.local.lmc = static_cast<std::uint8_t>(lmc);
  m.local.sm_lid = static_cast<std::uint16_t>(sm_lid);
  return true;
}

}  // namespace ibfx
