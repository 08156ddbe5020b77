// Link health (issue #34): every cable judged from both ends, sweep after
// sweep. Reads what the sweep already read (PortCounters through the
// accumulator, PortInfo through discovery): it sends no MAD.
//
// A cable is known once discovery saw it up; it stays known, with both
// ends, when it goes down (discovery then no longer sees its far end) until
// it comes back, is cabled elsewhere, or discovery forgets an end's node.
// Only links with something to remember (errors in the window, a down, a
// condition) hold state; the rest cost a few bytes per port.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "analysis/link_condition.h"
#include "analysis/topology.h"
#include "fabric/counter_accumulator.h"
#include "fabric/fabric.h"
#include "fabric/port_key.h"
#include "links/link_direction.h"
#include "links/link_down_history.h"
#include "links/link_length.h"
#include "links/link_peers.h"
#include "links/link_report.h"

namespace ibfx {

class LinkHealthTracker {
 public:
  // One sweep of `fabric`: `port_read[n][i]` says which ports it read (the
  // accumulator holds their latest readings); `topology` (may be null) is
  // the one classified from `fabric`; `now` is the sweep's time, Unix
  // seconds.
  std::shared_ptr<const LinkHealthReport> observe(const std::shared_ptr<const Fabric>& fabric,
                                                  const Topology* topology,
                                                  const CounterAccumulator& accumulator,
                                                  const std::vector<std::vector<bool>>& port_read,
                                                  double now, const LinkHealthConfig& config);
  // A node discovery forgot: the cables it ended go with it.
  void forget(std::uint64_t guid);

 private:
  // The counters link health reads, in this order (PortCounters, IBA 16.1.3.5).
  static constexpr std::size_t kWatched = 5;
  struct PortMemory {
    std::array<std::uint64_t, kWatched> raw{};
    std::array<std::uint8_t, kWatched> bits{};  // 0: never read
    double first_read = 0;                      // Unix seconds; 0: never
  };
  // What one port's reading said this sweep.
  struct PortObservation {
    LinkErrorCounts errors;  // at its receiver: the direction into it
    std::uint64_t downs = 0;
    bool restart = false;    // a counter went back: the node or its PMA restarted
    bool saturated = false;  // SymbolErrorCounter at the maximum of its field
  };
  struct LinkState {
    explicit LinkState(const LinkHealthConfig& c) : into_a(c), into_b(c) {}
    PortKey a, b;
    std::size_t ka = kNoPort, kb = kNoPort;  // flattened port indices in fabric_
    LinkDirection into_a, into_b;
    LinkDownHistory downs_a, downs_b;
    bool saturated_a = false, saturated_b = false;
    bool down_now = false;
    // Sweep time of the last LinkDowned increment (0: none pending): the
    // counters alone cannot tell a link back up from one that stays down,
    // so it stays `down` until there is proof either way (held_down()).
    double downed_at = 0;
    bool degraded_now = false;
    SlowerLink degraded;         // when degraded_now
    bool longer_now = false;     // length_outlier (links/link_length.h)
    LongerLink longer;           // when longer_now
    double bits_per_second = 0;  // its line rate when last up
    std::uint8_t conditions = 0;
    LinkCondition worst = LinkCondition::kNone;
    double since = 0;
  };
  static constexpr std::size_t kNoPort = ~std::size_t{0};

  void adopt(const std::shared_ptr<const Fabric>& fabric, const Topology* topology);
  // adopt's steps. The per-port memory, carried over to the new fabric's
  // ports by (GUID, port); its cables up learnt.
  void carry_memory(const Fabric& fabric);
  void index_far_ports(const Fabric& fabric);
  // The links slower than they should be, and longer than their peers.
  void find_odd_links(const Fabric& fabric, const Topology* topology);
  // cable_ (below) of each cable's listing end, the one with the smaller
  // (GUID, port).
  void mark_plain_cables(const Fabric& fabric);
  void learn_cable(const PortKey& a, const PortKey& b);
  void read_ports(const CounterAccumulator& accumulator,
                  const std::vector<std::vector<bool>>& port_read, double now);
  void visit_links(double now, const LinkHealthConfig& config);
  void touch(const PortKey& a, std::size_t ka, const PortKey& b, std::size_t kb, bool down,
             double now, const LinkHealthConfig& config);
  LinkReport judge(LinkState& s, double now, const LinkHealthConfig& config,
                   const std::vector<std::vector<bool>>& port_read);
  const PortObservation* observation(std::size_t k) const;
  // Whether a link whose LinkDowned moved at s.downed_at is still down for
  // all this sweep knows; clears s.downed_at once it knows better.
  bool held_down(LinkState& s, const std::vector<std::vector<bool>>& port_read) const;
  std::size_t flat_index(const PortKey& key) const;

  std::shared_ptr<const Fabric> fabric_;
  std::vector<std::size_t> first_port_;  // per node of fabric_: its first flattened port
  std::vector<PortMemory> memory_;       // parallel to fabric_'s ports
  std::vector<std::uint32_t> observed_;  // parallel to memory_: index into observations_ + 1
  std::vector<std::size_t> far_port_;    // parallel to memory_: the far end's index, or kNoPort
  // Parallel to memory_, per discovery: 0 not the listing end of an up
  // cable, 1 the listing end of a healthy-looking one (looked at only when
  // an end has an observation), 2 the listing end of a cable down, slower
  // or longer than its peers (looked at every sweep).
  std::vector<std::uint8_t> cable_;
  // Parallel to memory_: the accumulator's entry for the port, looked up
  // once (its nodes never move; forget() drops them all, as the exporter
  // forgets a node in both at once).
  std::vector<const CounterAccumulator::State*> state_;
  std::vector<std::pair<std::size_t, PortObservation>> observations_;  // this sweep's
  std::unordered_map<std::size_t, SlowerLink> slower_;                 // by flattened port index
  std::unordered_map<std::size_t, LongerLink> longer_;  // by the listing end's flattened index
  std::unordered_map<PortKey, PortKey, PortKeyHash> far_end_;  // every cable seen up, both ways
  std::unordered_map<PortKey, LinkState, PortKeyHash> links_;  // by end a
  std::array<std::uint64_t, kLinkConditionCount> events_total_{};
  double previous_now_ = 0;
  double discovery_started_ = 0;  // Unix seconds the current fabric's discovery started
};

}  // namespace ibfx
