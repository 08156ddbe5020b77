// The links with a condition (issue #34: the unhealthy ones, then those
// only a length outlier, issue #41) of a snapshot as the status page and
// /status.json show them: worst first, both ends named (names made valid
// UTF-8, still untrusted: every renderer escapes them), the BER of each
// direction. `node` is the end whose receiver sees the worse direction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/page_rows.h"
#include "snapshot/snapshot.h"

namespace ibfx {

// A link as the live page shows it: what every page shows of it (the
// history keeps that part, history/page_rows.h), then every condition it
// has and what its width, speed and round trip say.
struct StatusLinkHealth : PageLink {
  std::vector<std::string> conditions;  // every one it has, worst first
  std::string width;                    // "4x", of `node`'s port ("" when unknown)
  std::string speed;                    // "HDR"
  double rate_gbps = 0;                 // degraded: its rate and its peers' median
  double peers_rate_gbps = 0;
  std::string degraded_reason;  // degraded: why, degraded_reason(); "" otherwise
  std::string length_reason;    // length_outlier: its round trip and its peers'; "" otherwise
};

// A Slurm job as the page and the history name it: "<id> <name> (<user>)",
// made valid UTF-8 (still untrusted text).
std::string job_label(const JobPorts& job);

// At most `max_rows` links, worst first (the snapshot's order).
// `clean_names` are the snapshot's node names made valid UTF-8.
std::vector<StatusLinkHealth> status_links(const Snapshot& s,
                                           const std::vector<std::string>& clean_names,
                                           std::size_t max_rows);

// The worst condition of the cable at (guid, port): every one can slow a
// port down (retransmissions, retraining, a cable down under a flapping
// one, fewer lanes or a lower speed); "" when the cable is healthy. What a
// congestion root's row says of its cable, on the page and in /top.
std::string link_trouble_at(const LinkHealthReport& links, std::uint64_t guid, int port);

// Why a degraded link is (links/link_peers.h, degraded_reason()): below
// the width and speed both ends enable, below its peers, or both.
std::string link_degraded_reason(const Fabric& fabric, const LinkReport& link);
// Why a link is a length outlier (links/link_length.h): "round trip 180 ns,
// its peers' 95 ns".
std::string link_length_reason(const LinkReport& link);

}  // namespace ibfx
