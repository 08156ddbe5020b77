// The route model: what the switches' forwarding tables (fabric/route_tables.h)
// make of the fabric. For every destination LID its tables form a tree
// towards it (or, when broken, a path that loops or ends nowhere); from
// those trees, for every switch port, how many destinations are routed out
// of it and how many (source HCA port, destination HCA port) pairs cross
// it; the path of one pair (`trace`, what ibtracert prints); and the
// source HCA ports whose routes cross one port (the senders behind a root
// of congestion). Pure computation, immutable once built; rebuilt when the
// tables or the fabric change (docs/routes.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "fabric/route_tables.h"

namespace ibfx {

// An HCA port of the fabric: the end of a route.
struct RouteEndpoint {
  std::int32_t node = kNoNode;  // index into Fabric::nodes
  std::uint8_t port = 0;        // port number
  bool operator==(const RouteEndpoint&) const = default;
};

// Who answers at a LID: a switch (port 0) or an HCA port.
struct LidOwner {
  std::int32_t node = kNoNode;
  std::uint8_t port = 0;
};

struct RouteHop {
  std::int32_t node = kNoNode;  // a switch
  std::uint8_t in_port = 0;
  std::uint8_t out_port = 0;
};

enum class TraceError : std::uint8_t {
  kNone,
  kNoSourceLink,      // the source port has no active link into the fabric
  kUnknownLid,        // no discovered port answers at the destination LID
  kNoTable,           // a switch on the way has no table read yet
  kStaleTable,        // a switch on the way stopped answering: its table may be old
  kDeadEnd,           // a switch's table forwards the LID nowhere (0xFF, or a port without a link)
  kLinkDown,          // a switch forwards the LID into a link that is not up
  kLoop,              // the tables send the LID round in a circle
  kWrongDestination,  // the path ends at another HCA than the LID's
};
// "no_source_link", "unknown_lid", "no_table", "stale_table", "no_route",
// "link_down", "loop", "wrong_destination"; "" for kNone.
std::string_view trace_error_name(TraceError error);

struct RouteTrace {
  std::vector<RouteHop> hops;  // switches from the source HCA towards the destination
  TraceError error = TraceError::kNone;
  // The switch (node index) where the trace failed, kNoNode when none.
  std::int32_t at_node = kNoNode;
  bool ok() const { return error == TraceError::kNone; }
};

// Per switch port (index like FabricNode::ports): the route counts.
struct PortRoutes {
  // Destination HCA LIDs (every LID of an LMC range) routed out of this port.
  std::uint32_t destinations = 0;
  // (source HCA port, destination HCA port) pairs whose route (to the
  // destination's base LID) crosses this port.
  std::uint64_t pairs = 0;
};

struct RouteModelStats {
  std::size_t switches = 0;          // switches of the fabric
  std::size_t switches_routed = 0;   // with a complete table
  std::size_t switches_stale = 0;    // tables kept from a switch that stopped answering
  std::size_t hca_ports = 0;         // destinations and sources (HCA ports with a LID)
  std::size_t destination_lids = 0;  // HCA LIDs (LMC ranges included)
  // (switch, destination LID) entries whose path loops or ends nowhere
  // before the destination.
  std::uint64_t broken_routes = 0;
  double build_seconds = 0;
};

class RouteModel {
 public:
  // `fabric` and `tables` are kept (shared): the model answers for them.
  static std::shared_ptr<const RouteModel> build(std::shared_ptr<const Fabric> fabric,
                                                 std::shared_ptr<const RouteTables> tables);

  const Fabric& fabric() const { return *fabric_; }
  const std::shared_ptr<const Fabric>& fabric_ptr() const { return fabric_; }
  const RouteTables& tables() const { return *tables_; }
  const std::shared_ptr<const RouteTables>& tables_ptr() const { return tables_; }
  const RouteModelStats& stats() const { return stats_; }

  // Who answers at `lid` (node kNoNode: nobody discovered).
  LidOwner owner(std::uint16_t lid) const;
  // The table of switch node `node` (index), null when none was read.
  const SwitchRoutes* table(std::int32_t node) const;

  // The path from HCA port `source` to `lid`, hop by hop, as the tables
  // forward it; never a guess: any doubt is an error naming where.
  RouteTrace trace(const RouteEndpoint& source, std::uint16_t lid) const;

  // Route counts of node `node`'s ports (parallel to its FabricNode::ports);
  // empty for HCAs.
  const std::vector<PortRoutes>& port_routes(std::int32_t node) const;
  // Whether the counts of `node`'s ports rest on its own complete table.
  bool routed(std::int32_t node) const;

  // The HCA ports whose routes to some destination cross port `port`
  // (number) of node `node`: for a switch port, every source whose path
  // to a destination the switch forwards out of that port passes the
  // switch; for an HCA port, the port itself. Unordered. Costs one walk
  // per destination routed out of the port.
  std::vector<RouteEndpoint> sources_through(std::int32_t node, std::uint8_t port) const;

  // The bytes the model holds besides the fabric and the tables it shares
  // (capacities of its own vectors): what the bench reports.
  std::size_t memory_bytes() const;

  // Every HCA port with a LID: the sources and destinations of the counts.
  const std::vector<RouteEndpoint>& endpoints() const { return endpoints_; }

 private:
  RouteModel() = default;
  struct Link {
    std::int32_t node = kNoNode;  // the far end
    std::uint8_t port = 0;
    bool up = false;
  };
  // What a walk from one switch towards a destination LID came to.
  enum class Reach : std::uint8_t { kUnknown, kVisiting, kReaches, kBroken, kUnread };
  // count_routes's steps and the arrays they share (route_model.cpp).
  class RouteCounter;
  // The far end of port `port` (number) of node `node`.
  Link link(std::int32_t node, std::uint8_t port) const;
  void index_lids();
  void index_links();
  void count_routes();

  std::shared_ptr<const Fabric> fabric_;
  std::shared_ptr<const RouteTables> tables_;
  RouteModelStats stats_;
  std::vector<LidOwner> owners_;                 // by LID
  std::vector<std::int32_t> table_of_;           // by node: index into tables_->switches, -1
  std::vector<std::vector<Link>> links_;         // by node, by port number
  std::vector<std::vector<PortRoutes>> routes_;  // by node, by port index
  std::vector<std::uint32_t> attached_;          // by node (switch): HCA ports linked to it
  std::vector<RouteEndpoint> endpoints_;
  std::vector<std::uint16_t> base_lids_;         // parallel to endpoints_
  std::vector<std::uint16_t> destination_lids_;  // every HCA LID
};

}  // namespace ibfx
