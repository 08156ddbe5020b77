// /nodes and /nodes/<host> (issue #43, docs/nodes.md): a host's fabric
// health as the snapshot holds it (nodes/node_health.h), in JSON for
// check-node and scripts, or as text (?format=text) for a person at a
// shell. Rendered per request from the published snapshot: one host, or
// the unhealthy ones, never a MAD.
#pragma once

#include <string>
#include <string_view>

#include "snapshot/snapshot.h"

namespace ibfx {

struct NodeHealthAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
};

// `now`: Unix seconds (a snapshot older than nodes.stale_after makes the
// verdict unknown). Unknown host: 404, verdict unknown.
NodeHealthAnswer render_node_health(const Snapshot& snapshot, std::string_view host, double now,
                                    bool text);
// Every host that is not healthy (unhealthy, fabric incident), and the counts.
NodeHealthAnswer render_nodes_health(const Snapshot& snapshot, double now, bool text);

}  // namespace ibfx
