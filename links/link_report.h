// What link health (issue #34) hands to the snapshot after each sweep: the
// unhealthy links, worst first, and the ports whose receivers saw symbol
// errors in the BER window. Plain data, built by LinkHealthTracker.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "analysis/link_condition.h"
#include "fabric/fabric.h"
#include "links/ber_window.h"

namespace ibfx {

struct LinkEnd {
  std::uint64_t guid = 0;
  std::uint8_t port = 0;
  // Index into the nodes of the fabric the sweep ran on; kNoNode: not in it.
  std::int32_t node = kNoNode;
  std::int32_t port_index = -1;  // index into FabricNode::ports; -1: not in it
  bool read = false;             // its PortCounters were read by this sweep
};

// One direction, judged at the receiver of the end it goes into.
struct LinkDirectionReport {
  LinkCondition condition = LinkCondition::kNone;  // kBerError, kBerWarning, kLinkErrors or none
  double symbol_ber = -1;                          // < 0: no symbol error in the window
  bool at_least = false;                           // the SymbolErrorCounter saturated
  LinkErrorCounts long_window;                     // its receiver's errors in the long window
};

struct LinkReport {
  LinkEnd a, b;  // a: the end with the smaller (GUID, port)
  LinkDirectionReport into_a, into_b;
  LinkCondition condition = LinkCondition::kNone;  // the worst it has
  std::uint8_t conditions = 0;                     // every one it has: bit 1 << condition
  bool down = false;
  std::uint32_t downs_last_hour = 0;  // LinkDowned increments, the end that saw most
  double since = 0;                   // Unix seconds its worst condition started
  // Degraded (links/link_peers.h): its rate and its peers' median, and
  // which of the two made it so. `enabled`: the width and speed both ends
  // enable, when below_enabled.
  double rate_gbps = 0;
  double peers_rate_gbps = 0;
  bool below_peers = false;
  bool below_enabled = false;
  FabricPort enabled;
  // Length outlier (links/link_length.h): the cable's PortInfo
  // LinkRoundTripLatency and the median of the peers it was judged against,
  // in ns, when has(kLengthOutlier).
  std::uint32_t round_trip_ns = 0;
  std::uint32_t peers_round_trip_ns = 0;
  bool has(LinkCondition c) const { return (conditions >> static_cast<unsigned>(c)) & 1u; }
  // Any condition that alarms (link_condition_alarms()): a link with only
  // `length_outlier` is listed, but not unhealthy.
  bool unhealthy() const {
    for (std::size_t c = 1; c < kLinkConditionCount; ++c) {
      if (has(static_cast<LinkCondition>(c)) &&
          link_condition_alarms(static_cast<LinkCondition>(c)))
        return true;
    }
    return false;
  }
  // For a one-direction condition, the end whose receiver sees it (the
  // direction INTO it is the bad one): b when into_b is the worse one.
  bool b_receives_worse() const {
    if (into_b.condition != into_a.condition) return into_b.condition > into_a.condition;
    return into_b.symbol_ber > into_a.symbol_ber;
  }
  const LinkDirectionReport& worse() const { return b_receives_worse() ? into_b : into_a; }
};

// A port whose receiver saw symbol errors in the window, and their BER.
struct PortBer {
  std::int32_t node = kNoNode;
  std::uint32_t port_index = 0;
  double ber = 0;
  bool at_least = false;
};

struct LinkHealthReport {
  // Links with a condition, worst condition first, then highest BER: the
  // unhealthy ones (LinkReport::unhealthy()), then those that are only
  // `length_outlier`.
  std::vector<LinkReport> links;
  std::vector<PortBer> port_ber;  // sparse, by node and port index
  // Conditions that started on a link since the daemon started.
  std::array<std::uint64_t, kLinkConditionCount> events_total{};
  std::size_t tracked = 0;       // links the tracker holds state for
  std::size_t memory_bytes = 0;  // what the tracker holds, about
};

}  // namespace ibfx
