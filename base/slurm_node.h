// What the daemon and its check-node client (client/check_node.h) agree on
// about a Slurm node: the host names either accepts from outside, and the
// drain reasons the daemon gives and check-node sets; and the one way to
// make an untrusted node name safe to print.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ibfx {

// A host name as a URL, a Slurm command line or the page may carry it:
// letters, digits, '.', '-' and '_', 1 to 255 bytes (RFC 1123 host names
// and Slurm's node names fit; nothing in it needs escaping in a path or an
// argument). Checked wherever a host name comes from outside: /nodes/<host>,
// check-node's --host, the page's links.
bool valid_node_host(std::string_view host);

// Every reason this daemon gives starts with it: check-node resumes only a
// node drained with it, never one an administrator drained.
inline constexpr std::string_view kNodeReasonPrefix = "ibfx:";
// Slurm keeps a reason of any length; a short one stays readable in sinfo.
inline constexpr std::size_t kNodeReasonMax = 160;

// A word of an untrusted name, safe anywhere a reason goes (a log line, a
// Slurm reason or comment, a shell a careless admin pastes it into):
// letters, digits and ".-_:/@+" kept, anything else '?', at most 64 bytes.
// (Node health's reasons and jobs' receipts name HCAs with it.)
std::string safe_node_word(std::string_view text);

}  // namespace ibfx
