#include "discovery/fabric_codec.h"

#include <bit>
#include <cstdint>
#include <utility>

namespace ibfx {
namespace {

// "IBFXFAB" and a format version: a child from another build is refused,
// not misread.
constexpr std::string_view kFabricMagic{"IBFXFAB\x06", 8};

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(std::uint16_t v) { fixed(v); }
  void u32(std::uint32_t v) { fixed(v); }
  void u64(std::uint64_t v) { fixed(v); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  void raw(std::string_view s) { out_ += s; }
  std::string take() { return std::move(out_); }

 private:
  // Little-endian whatever the host: the format is defined, not the memory.
  template <typename T>
  void fixed(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool u8(std::uint8_t& v) { return fixed(v); }
  bool u16(std::uint16_t& v) { return fixed(v); }
  bool u32(std::uint32_t& v) { return fixed(v); }
  bool u64(std::uint64_t& v) { return fixed(v); }
  bool str(std::string& s) {
    std::uint32_t n = 0;
    if (!u32(n) || n > remaining()) return false;
    s.assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool raw(std::string_view expected) {
    if (in_.substr(pos_, expected.size()) != expected) return false;
    pos_ += expected.size();
    return true;
  }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  template <typename T>
  bool fixed(T& v) {
    if (remaining() < sizeof(T)) return false;
    T r = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      r = static_cast<T>(r | (static_cast<T>(static_cast<std::uint8_t>(in_[pos_ + i])) << (8 * i)));
    }
    pos_ += sizeof(T);
    v = r;
    return true;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
};

// Smallest encoded sizes, to bound counts read from the input before
// reserving anything.
constexpr std::size_t kMinNodeBytes = 8 + 1 + 4 + 2 + 4 + 4 + 1 + 1 + 1 + 4;
// PortInfo field widths (IBA 14.2.5.6): LMC 3 bits, LinkRoundTripLatency 24.
constexpr std::uint8_t kMaxLmc = 7;
constexpr std::uint32_t kMaxRoundTripNs = 0xffffff;
constexpr std::size_t kPortBytes = 1 + 2 + 1 + 8 + 4 + 4 + 1;

}  // namespace

std::string encode_fabric(const Fabric& fabric) {
  Writer w;
  w.raw(kFabricMagic);
  w.u64(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(fabric.discovered_at.time_since_epoch())
          .count()));
  w.u64(std::bit_cast<std::uint64_t>(fabric.discovery_seconds));
  w.u32(fabric.smp_timeouts);
  w.u32(fabric.smp_errors);
  w.u32(static_cast<std::uint32_t>(fabric.nodes.size()));
  for (const FabricNode& n : fabric.nodes) {
    w.u64(n.guid);
    w.u8(static_cast<std::uint8_t>(n.type));
    w.str(n.description);
    w.u16(n.lid);
    w.u32(n.vendor_id);
    w.u32(n.device_id);
    w.u8(n.num_ports);
    w.u8(n.present ? 1 : 0);
    w.u8(n.runs_sm ? 1 : 0);
    w.u32(static_cast<std::uint32_t>(n.ports.size()));
    for (const FabricPort& p : n.ports) {
      w.u8(p.number);
      w.u16(p.lid);
      w.u8(p.lmc);
      w.u8(p.state);
      w.u8(p.phys_state);
      w.u8(p.width_active);
      w.u8(p.speed_active);
      w.u8(p.speed_ext_active);
      w.u8(p.width_enabled);
      w.u8(p.speed_enabled);
      w.u8(p.speed_ext_enabled);
      w.u32(p.link_round_trip_ns);
      w.u32(static_cast<std::uint32_t>(p.remote_node));
      w.u8(p.remote_port);
    }
  }
  w.u64(fabric.local_node);
  w.u16(fabric.sm_lid);
  w.u8(fabric.local_port_state);
  return w.take();
}

bool decode_fabric(std::string_view bytes, Fabric& fabric, std::string& error) {
  Reader r(bytes);
  Fabric f;
  auto fail = [&error](const std::string& why) {
    error = "malformed fabric: " + why;
    return false;
  };
  if (!r.raw(kFabricMagic)) return fail("bad magic or format version");
  std::uint64_t ns = 0, seconds_bits = 0;
  std::uint32_t node_count = 0;
  if (!r.u64(ns) || !r.u64(seconds_bits) || !r.u32(f.smp_timeouts) || !r.u32(f.smp_errors) ||
      !r.u32(node_count)) {
    return fail("truncated header");
  }
  f.discovered_at = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(static_cast<std::int64_t>(ns))));
  f.discovery_seconds = std::bit_cast<double>(seconds_bits);
  if (node_count > r.remaining() / kMinNodeBytes) return fail("node count beyond the data");
  f.nodes.resize(node_count);
  for (FabricNode& n : f.nodes) {
    std::uint8_t type = 0, present = 0, runs_sm = 0;
    std::uint32_t port_count = 0;
    if (!r.u64(n.guid) || !r.u8(type) || !r.str(n.description) || !r.u16(n.lid) ||
        !r.u32(n.vendor_id) || !r.u32(n.device_id) || !r.u8(n.num_ports) || !r.u8(present) ||
        !r.u8(runs_sm) || !r.u32(port_count)) {
      return fail("truncated node");
    }
    if (type > static_cast<std::uint8_t>(NodeType::kRouter)) return fail("bad node type");
    if (present > 1) return fail("bad present flag");
    if (runs_sm > 1) return fail("bad runs_sm flag");
    n.type = static_cast<NodeType>(type);
    n.present = present == 1;
    n.runs_sm = runs_sm == 1;
    if (port_count > 255 || port_count > r.remaining() / kPortBytes) {
      return fail("port count beyond the data");
    }
    n.ports.resize(port_count);
    for (FabricPort& p : n.ports) {
      std::uint32_t remote = 0;
      if (!r.u8(p.number) || !r.u16(p.lid) || !r.u8(p.lmc) || !r.u8(p.state) ||
          !r.u8(p.phys_state) || !r.u8(p.width_active) || !r.u8(p.speed_active) ||
          !r.u8(p.speed_ext_active) || !r.u8(p.width_enabled) || !r.u8(p.speed_enabled) ||
          !r.u8(p.speed_ext_enabled) || !r.u32(p.link_round_trip_ns) || !r.u32(remote) ||
          !r.u8(p.remote_port)) {
        return fail("truncated port");
      }
      // Wider than their PortInfo fields: not a discovery's (an LMC above 7
      // would be a LID range no port answers at).
      if (p.lmc > kMaxLmc) return fail("bad LMC");
      if (p.link_round_trip_ns > kMaxRoundTripNs) return fail("bad link round trip");
      p.remote_node = static_cast<std::int32_t>(remote);
    }
  }
  if (!r.u64(f.local_node) || !r.u16(f.sm_lid) || !r.u8(f.local_port_state)) {
    return fail("truncated trailer");
  }
  if (f.local_port_state > 4) return fail("bad local port state");
  if (r.remaining() != 0) return fail("trailing bytes");
  for (const FabricNode& n : f.nodes) {
    for (const FabricPort& p : n.ports) {
      if (p.remote_node != kNoNode &&
          (p.remote_node < 0 || static_cast<std::uint32_t>(p.remote_node) >= node_count)) {
        return fail("link to a node that does not exist");
      }
    }
  }
  f.index();
  fabric = std::move(f);
  return true;
}

}  // namespace ibfx
