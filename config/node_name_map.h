// The infiniband-diags node-name-map (ibnetdiscover --node-name-map): the
// names operators give their nodes, over the NodeDescriptions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ibfx {

// infiniband-diags node-name-map: "0x<guid> \"name\"" per line, '#' comments.
using NodeNameMap = std::unordered_map<std::uint64_t, std::string>;
NodeNameMap load_node_name_map(const std::string& path);
NodeNameMap parse_node_name_map(std::string_view text, const std::string& source_name);

}  // namespace ibfx
