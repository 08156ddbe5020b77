// The switch view (GET /?node=NAME): one node's ports as cells coloured by
// W, each with the far end of its cable, and the same as a table. Small
// (one node), so it is rendered per request from the published snapshot;
// it reads the snapshot only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "snapshot/snapshot.h"

namespace ibfx {

// The node named `name` (its display name, its NodeDescription, or its GUID
// as guid_hex() writes it); nullopt when none is.
std::optional<std::size_t> find_node_named(const Snapshot& snapshot, std::string_view name);

// `node` indexes snapshot.fabric->nodes.
std::string render_switch_html(const Snapshot& snapshot, std::size_t node,
                               std::string_view telemetry_path = "/metrics");

// The page for a name no node has (the name escaped).
std::string render_unknown_node_html(std::string_view name,
                                     std::string_view telemetry_path = "/metrics");

}  // namespace ibfx
