// The fabric's unicast routes as the switches hold them: each switch's
// LinearForwardingTable (IBA 14.2.5.10: destination LID -> out port, 64
// LIDs a block) up to SwitchInfo:LinearFDBTop (IBA 14.2.5.4), as the route
// reader (sweep/route_reader.h) last read it. Plain data, like the rest of
// fabric/: the route model (routing/) reads it without seeing a MAD.
// Immutable once published: the sweep thread hands a new
// shared_ptr<const RouteTables> on when any table changed.
#pragma once

#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ibfx {

// An LFT entry that forwards nowhere. IBA 14.2.5.10: a port number beyond
// the switch's ports (conventionally 0xFF) means "drop"; opensm writes 0xFF
// for a LID it did not route (OSM_NO_PATH).
inline constexpr std::uint8_t kNoRoute = 0xFF;
inline constexpr std::size_t kLftBlockLids = 64;  // LIDs per LinearForwardingTable block

struct SwitchRoutes {
  std::uint64_t guid = 0;
  std::uint16_t lid = 0;             // the LID the table was read at (the switch's port 0)
  std::uint16_t linear_fdb_top = 0;  // SwitchInfo:LinearFDBTop: the highest LID in use
  // Out port per destination LID (index = LID), linear_fdb_top + 1 entries;
  // kNoRoute where the table forwards nowhere. Port 0 is the switch itself.
  std::vector<std::uint8_t> out_port;
  // Every block up to linear_fdb_top has been read at least once.
  bool complete = false;
  // The switch stopped answering: the table is the last one read, kept.
  bool stale = false;
  // When the table was last confirmed whole (every block read, the last
  // one at this time; epoch: never).
  std::chrono::system_clock::time_point read_at{};

  std::uint8_t port_for(std::uint16_t dlid) const {
    return dlid < out_port.size() ? out_port[dlid] : kNoRoute;
  }
};

struct RouteTables {
  std::vector<SwitchRoutes> switches;
  std::unordered_map<std::uint64_t, std::size_t> by_guid;  // switch GUID -> index
  // Increases with every change of any table's content (a re-route, a
  // switch added or dropped): the route model is rebuilt when it moves.
  std::uint64_t version = 0;
  // The last full read: every switch's every block once, after start-up, a
  // discovery that changed the fabric or a detected re-route.
  std::chrono::system_clock::time_point full_read_finished{};  // epoch: none finished yet
  double full_read_seconds = 0;
  // Re-routes seen so far (a change to tables that were complete).
  std::uint64_t reroutes = 0;

  const SwitchRoutes* find(std::uint64_t guid) const {
    auto it = by_guid.find(guid);
    return it == by_guid.end() ? nullptr : &switches[it->second];
  }
  void index() {
    by_guid.clear();
    for (std::size_t i = 0; i < switches.size(); ++i) by_guid[switches[i].guid] = i;
  }
};

}  // namespace ibfx
