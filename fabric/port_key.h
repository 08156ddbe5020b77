// A port of the fabric by node GUID and port number: the key of every
// per-port table that must survive rediscoveries (LIDs and indices move).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ibfx {

struct PortKey {
  std::uint64_t guid = 0;
  std::uint8_t port = 0;
  bool operator==(const PortKey&) const = default;
};
struct PortKeyHash {
  std::size_t operator()(const PortKey& k) const noexcept {
    return std::hash<std::uint64_t>{}(k.guid * 0x9E3779B97F4A7C15ull ^ k.port);
  }
};

}  // namespace ibfx
