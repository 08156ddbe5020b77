// A GUID as users write it in a query (?node=, /route?from=): 0x-prefixed
// or not, any number of leading zeros, hex digits of either case. The one
// parser beside fabric/'s guid_hex(), which writes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ibfx {

std::optional<std::uint64_t> parse_guid(std::string_view text);

}  // namespace ibfx
