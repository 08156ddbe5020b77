// The rows every status page shows, of the sweep it is the page of or of a
// sweep long gone (/?at=): a root of congestion, an unhealthy link, how the
// sweep went. They are the status model's own types (views/status_model.h
// extends each with what only the live page shows: a root's route evidence
// and senders, a link's width, speed and peers), defined here so that the
// history below views/ keeps them as they are, not a mirror of them with
// converters both ways (issue #42). Plain data; names made valid UTF-8 by
// whoever built them, still untrusted: every renderer escapes them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/topology.h"
#include "fabric/fabric.h"

namespace ibfx {

// The far end of a port's cable (empty name and port 0: no link).
struct StatusFarEnd {
  std::uint64_t guid = 0;
  std::string name;
  int port = 0;
};

// One end of an unhealthy link.
struct StatusLinkEnd {
  std::uint64_t guid = 0;
  std::string name;  // empty when the node is no longer in the fabric
  int port = 0;
  bool read = false;  // its counters were read by the last sweep
  // Index into the snapshot's fabric; kNoNode in the history, which
  // outlives the fabric it was taken from.
  std::int32_t node = kNoNode;
};

// A root of congestion (analysis/congestion_forest.h) as a page lists it.
struct PageRoot {
  std::uint64_t guid = 0;
  std::string name;
  int port = 0;
  Tier tier = Tier::kUnknown;
  std::string cause;  // cause_name()
  double score = 0;
  std::size_t victims = 0;
  double stall = 0;
  double utilization = 0;
  StatusFarEnd remote;
  // The Slurm jobs this root hurts (issue #28; nullopt: no job source, and
  // the page says so instead of showing an empty list).
  std::optional<std::vector<std::string>> jobs;
  // The jobs on the HCA ports sending into it (its senders', issue #41): a
  // job that feeds the root sees it on its own page (/?job=).
  std::vector<std::string> sending_jobs;
};

// A link with a condition (issue #34) as a page lists it: both ends, the
// worst condition, the symbol BER into each end, its downs and since when.
struct PageLink {
  StatusLinkEnd node;                       // the end whose receiver sees the worse direction
  StatusLinkEnd remote;                     // the other end
  std::string condition;                    // the worst: link_condition_name()
  std::optional<double> symbol_ber;         // into `node`; none without symbol errors
  bool symbol_ber_at_least = false;         // its SymbolErrorCounter saturated
  std::optional<double> remote_symbol_ber;  // into `remote`
  std::uint32_t downs_last_hour = 0;
  double since = 0;  // Unix seconds its worst condition started
  // The Slurm jobs with a port at either end (job_label()); nullopt: no
  // job source.
  std::optional<std::vector<std::string>> jobs;
};

// How a sweep went, as the page's header says it.
struct PageSweep {
  double duration_seconds = 0;
  double interval_seconds = 0;  // between the two sweeps W and U are measured over
  bool completed = true;        // false: the sweep budget cut it short
  bool scored = false;          // W and U known (two sweeps)
  std::size_t nodes = 0;
  std::size_t nodes_swept = 0;
  std::size_t nodes_answering = 0;
  std::size_t ports = 0;
  std::size_t ports_read = 0;
};

// Appends to a row's job list the labels of `from` it does not have yet,
// in their order: a root's sending_jobs from its senders, and the jobs of
// a root or link folded into a coarse step of the history.
inline void add_missing_jobs(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& job : from) {
    if (std::find(to.begin(), to.end(), job) == to.end()) to.push_back(job);
  }
}

}  // namespace ibfx
