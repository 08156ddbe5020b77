// A job's fabric receipt (issue #44, docs/receipts.md): what the daemon
// measured on a Slurm job's HCA ports while it ran, finished when the job
// leaves the running list, and the one-line answer to "was it the
// network?". Plain data: ReceiptTracker (receipt_tracker.h) builds it,
// receipt_json.h writes and reads it, ReceiptStore keeps it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/link_condition.h"

namespace ibfx {

// What a receipt says in one word: the `verdict` label of
// infiniband_job_receipts_total and the first word a script reads.
enum class ReceiptVerdict : std::uint8_t {
  kClean,          // stall under the clean threshold and no link condition
  kSelfInflicted,  // most stall in trees its own hosts fed
  kOtherJobs,      // most stall in trees other jobs' hosts fed
  kUnattributed,   // most stall in trees with no identified sender, or in none
  kLinkFault,      // little stall, but a link condition on its ports
  kNoData,         // no HCA port-time measured (too short, hosts not found)
};
inline constexpr std::size_t kReceiptVerdictCount = 6;
// "clean", "self_inflicted", "other_jobs", "unattributed", "link_fault", "no_data".
std::string_view receipt_verdict_name(ReceiptVerdict v);
// The inverse; false for an unknown name.
bool parse_receipt_verdict(std::string_view name, ReceiptVerdict& out);

// Where the cross-spine share comes from.
enum class CrossSpineBasis : std::uint8_t {
  kRoutes,   // the route model: the job's own (source, destination) pairs
  kUplinks,  // leaf up ports' bytes, the job alone on its leaves
  kUnknown,  // neither: not said
};
std::string_view cross_spine_basis_name(CrossSpineBasis b);  // "routes", "uplinks", "unknown"

struct ReceiptRail {
  int rail = -1;  // kNoRail: no rail known
  double bytes_sent = 0;
  double bytes_received = 0;
};

// One HCA port of the job, as its receipt names it.
struct ReceiptPort {
  std::uint64_t guid = 0;  // the HCA's node GUID
  std::uint8_t port = 0;   // port number
  std::string host;        // Slurm's node name
  std::string device;      // the description after the host ("mlx5_3"), made safe
  double stall_ratio = 0;  // stall seconds / port seconds over the job's life
};

// Another job whose hosts fed trees this job's ports stalled in.
struct ReceiptCulprit {
  std::uint64_t job_id = 0;
  double stall_seconds = 0;  // of this job's stall, the part that job's bytes explain
};

// A link condition seen on one of the job's ports (its HCA port or the
// leaf port cabled to it) while it ran.
struct ReceiptLinkIssue {
  ReceiptPort port;  // the job's HCA port on that link
  LinkCondition condition = LinkCondition::kNone;
  std::uint32_t downs = 0;  // LinkDowned increments seen while it ran
  double first_seen = 0;    // Unix seconds
  double last_seen = 0;
};

struct JobReceipt {
  std::uint64_t job_id = 0;
  std::string name, user, partition;  // as Slurm gave them (untrusted)
  std::vector<std::string> hosts;     // Slurm's node names
  double start = 0;       // Slurm's start_time (else the first sweep that saw it), Unix seconds
  double end = 0;         // the first poll without it (else the last sweep that saw it)
  bool end_known = true;  // false: the job source was down when it ended
  // What the daemon saw of [start, end]: the seconds its sweeps covered,
  // and the seconds they missed (a restart, a job source outage).
  double observed_seconds = 0;
  double missed_seconds = 0;

  // Traffic of its HCA ports (PortXmitData; received: the leaf port into
  // each, else the HCA's PortRcvData).
  double bytes_sent = 0;
  double bytes_received = 0;
  std::vector<ReceiptRail> rails;  // by rail, ascending
  double cross_spine_share = -1;   // of bytes_sent; < 0: not known
  CrossSpineBasis cross_spine_basis = CrossSpineBasis::kUnknown;

  // Stall of its HCA ports: port seconds observed, W x seconds summed.
  double port_seconds = 0;
  double stall_seconds = 0;
  ReceiptPort worst_port;   // highest stall ratio over the job's life
  double worst_minute = 0;  // Unix seconds the worst minute began (0: none)
  double worst_minute_ratio = 0;

  // The stall split: the four add up to stall_seconds.
  double self_stall_seconds = 0;           // trees its own hosts fed
  double other_jobs_stall_seconds = 0;     // trees other jobs' hosts fed (culprits)
  double unattributed_stall_seconds = 0;   // trees with no identified sender
  double outside_trees_stall_seconds = 0;  // stall in no exported tree
  std::vector<ReceiptCulprit> culprits;    // by stall_seconds, descending; at most kReceiptCulprits

  std::vector<ReceiptLinkIssue> links;  // by first_seen

  ReceiptVerdict verdict = ReceiptVerdict::kNoData;
  // One line a user understands, printable ASCII, at most kReceiptLineMax
  // bytes: "network: clean", "network: 11 % of port-time stalled, 9 % in
  // trees fed by job 4711; mlx5_3 on gpu0413 flapped twice".
  std::string line;

  double stall_ratio() const { return port_seconds > 0 ? stall_seconds / port_seconds : 0; }
};

// About the bytes a receipt holds in memory (its strings and vectors
// included): what the store's and the tracker's memory figures add up.
std::size_t receipt_memory_bytes(const JobReceipt& receipt);

inline constexpr std::size_t kReceiptCulprits = 10;
// Slurm's AdminComment holds more, but a line beyond this is not read.
inline constexpr std::size_t kReceiptLineMax = 200;

}  // namespace ibfx
