// One column of the status page's history (issue #35): what one sweep (or,
// beyond the recent window, one coarse step of sweeps) left on the page,
// reduced to what an operator looks back for: each switch's worst port
// (W, U and which port), the roots and unhealthy links as the page listed
// them (the page's own rows, history/page_rows.h), each running job's worst
// stall ratio and the sweep's health. Built by make_history_frame() from
// the status model the publisher renders anyway,
// kept by HistoryRing, never changed once built (frames are shared between
// the ring, publications and the state file's writer).
//
// Memory is what bounds the history, so a switch is 6 bytes a frame: W and
// U quantized to 1/60000 (finer than any colour or printed digit), its worst
// port, two flags. The switches' names live once in a table that frames
// share until a discovery changes the fabric.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/topology.h"
#include "history/page_rows.h"

namespace ibfx {

// A ratio in [0, 1] as kept in a frame; kHistoryNoRatio: unknown.
inline constexpr std::uint16_t kHistoryNoRatio = std::numeric_limits<std::uint16_t>::max();
inline constexpr double kHistoryRatioScale = 60000;
// Roots kept per frame (the page lists the top ones; a sweep rarely has
// more than a few): bounds a frame whatever the fabric does.
inline constexpr std::size_t kHistoryMaxRoots = 20;
// Jobs kept per frame, the worst first.
inline constexpr std::size_t kHistoryMaxJobs = 200;

// Unhealthy links kept per frame, the worst first (the page lists the
// worst ones; HistoryFrame::links_total counts them all): bounds a frame
// whatever the cabling does.
inline constexpr std::size_t kHistoryMaxLinks = 10;
// A link's downs in the hour before, as a frame keeps them: more than a
// link can go down in an hour, a bound on what a state file may say.
inline constexpr std::uint32_t kHistoryMaxDownsLastHour = 65535;

std::uint16_t quantize_ratio(double ratio);
double ratio_value(std::uint16_t quantized);  // kHistoryNoRatio: NaN

struct HistorySwitch {
  std::uint64_t guid = 0;
  std::string name;  // untrusted: every renderer escapes it
  Tier tier = Tier::kUnknown;
  int rail = kNoRail;
  int unit = -1;  // StatusSwitch::unit
  bool operator==(const HistorySwitch&) const = default;
};

// The switches of the fabric, in the status model's order.
struct HistorySwitchTable {
  std::vector<HistorySwitch> switches;
};

struct HistoryCell {
  static constexpr std::uint8_t kRoot = 1;          // one of its ports was a root
  static constexpr std::uint8_t kNotAnswering = 2;  // missed the sweep's PMA queries
  std::uint16_t stall = kHistoryNoRatio;
  std::uint16_t utilization = kHistoryNoRatio;
  std::uint8_t port = 0;  // the worst port (0: none); IB switches have at most 254
  std::uint8_t flags = 0;
  bool operator==(const HistoryCell&) const = default;
};

struct HistoryJob {
  std::uint64_t id = 0;
  std::string name;
  std::string user;
  double stall_max = 0;  // worst W over its ports
  // Its leaves (indices into the frame's switch table), ascending.
  std::vector<std::uint32_t> switches;
  bool operator==(const HistoryJob&) const = default;
};

struct HistoryFrame {
  double time = 0;  // the sweep's time (Unix seconds); coarse: its step's start
  double span = 0;  // 0: one sweep; coarse: the step's length
  std::uint32_t sweeps = 1;
  std::shared_ptr<const HistorySwitchTable> table;  // never null
  std::vector<HistoryCell> cells;                   // parallel to table->switches
  // The page's own rows (history/page_rows.h), as the page showed them.
  std::vector<PageRoot> roots;    // by score, descending, kHistoryMaxRoots
  std::vector<HistoryJob> jobs;   // by stall_max, descending
  std::vector<PageLink> links;    // worst first, kHistoryMaxLinks
  std::uint32_t links_total = 0;  // unhealthy links, all of them
  PageSweep sweep;

  // What it holds in memory, its table not counted (shared).
  std::size_t bytes() const;
};

using HistoryFramePtr = std::shared_ptr<const HistoryFrame>;

// The history at one instant: coarse frames, then sweep frames, by time.
// Immutable, handed to every publication (a vector of pointers: copying it
// each sweep costs a few kB).
struct HistoryFrames {
  std::vector<HistoryFramePtr> frames;
  // The frame a page "at" `time` shows: the last one at or before it (a
  // coarse frame covers its step). Null when the history starts later.
  HistoryFramePtr at(double time) const;
};

}  // namespace ibfx
