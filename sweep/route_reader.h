// The route reader: every switch's unicast forwarding table (IBA 14.2.5.10
// LinearForwardingTable, 64 LIDs a block, up to SwitchInfo:LinearFDBTop,
// IBA 14.2.5.4), read with LID-routed SMP Gets (never a Set) through the
// sweep's own MadEngine, and handed on as an immutable RouteTables
// (fabric/route_tables.h). docs/route-reader.md says what an operator sees.
//
// How it rides the sweep. SweepStage calls submit() before the Sweeper
// runs each sweep: the SMPs it queues go through the same pipeline, the
// same per-node in-flight limit and the same deadline as the sweep's PMA
// reads, and their callbacks run during the sweep's engine run. Each call
// may queue at most a budget of routes.smps_per_second x the time since
// the last call (capped at two sweep intervals), so the reads add a
// bounded, configured load and never hold a sweep up for long. A switch
// gets at most one in-flight window (the engine's per-node limit) at
// once, and the next SMP only when one is answered: a switch that has
// gone silent costs one window of timeouts per sweep, as it does the
// Sweeper. A cancelled SMP (the sweep's deadline came first) is asked
// again at a later call; one that timed out or was refused marks the
// switch stale (its last table kept) and is asked again too, one probe a
// sweep until the switch answers. after_run() publishes what changed.
//
// What it reads, and when. Each switch is read in cycles: SwitchInfo (for
// LinearFDBTop, which sizes the table), then every block 0..top/64. A
// cycle of a full pass reads into a staging table and, at its end,
// replaces the switch's table when it differs; a rotation cycle compares
// each block with the table held. Either confirms the table (read_at)
// when it ends. A full pass is a cycle of
// every switch with priority over everything else: after start-up, and
// whenever the fabric's switches or their LIDs change (a new Fabric from
// discovery). Between passes the cycles go on, each switch in turn, so
// that every table is re-read once per routes.reread_interval (within the
// budget; the whole budget for a minute after a link went down or up,
// while the SM re-routes): that rotating re-read is how a re-route is
// found, at a cost a quiet fabric hardly notices. When a block
// or LinearFDBTop differs from the table held, that switch's cycle starts
// over at the highest priority (its table is replaced as soon as it has
// been read whole again: the SM may still be writing it) and a full pass
// of every switch starts, since a subnet manager that re-routes one switch
// usually re-routes them all.
//
// Why a rotating re-read. No attribute tells that an LFT changed: SMInfo's
// ActCount moves with any SM activity, a port's change bit
// (PortInfo:CapabilityMask / SMP traps) is the SM's to see, not ours, and
// a switch keeps no LFT version. Re-reading is exact; reread_interval sets
// its pace. The detection latency is the longer of reread_interval and
// total blocks / smps_per_second: at 98k ports (1,280 switches x 278 =
// 355,840 SMPs on the bench's 16k-GPU fabric) and the defaults (1 minute,
// 10,000 SMPs/s) ~60 s to find a re-route (less when the SM re-routed many
// switches: the first changed block found starts the pass), then the full
// pass: 30-39 s measured with 10 s sweeps (bench/route_read). Since the
// SMPs share the sweep's deadline behind its reads, a sweep cut short
// cancels those to switches it did not reach, and the pass slows in
// proportion (at 1 s sweeps on ibsim, which reach 10-16 % of 98k ports,
// 8-14 % of the budget went through: 256-383 s; docs/benchmarks.md).
// A 98k-port full read within 60 s needs ~6,000 SMPs/s. Re-reading at the
// whole budget all the time instead cost a 4.9k-port fabric 12 % more MADs
// in every sweep (bench/sweep_floor).
//
// Do no harm (docs/safety.md). SwitchInfo and LinearForwardingTable are
// answered by each switch's own SMA, like the NodeInfo the sweep already
// sends every node, so they are not "optional MADs" in the SM guard's
// sense (sweep/sm_guard.h): a switch running the SM is read like any
// other. Only switches are asked; only Gets are sent.
//
// Memory: one byte per LID per switch, twice while a table is being
// re-read (held and staging) and once more per published RouteTables a
// consumer still holds: ~29 MB per copy at 1,600 switches x 18k LIDs.
//
// LMC > 0 needs nothing here: each LID of a port's range has its own LFT
// entry, read like any other. Sweep thread, like the engine.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "config/config.h"
#include "fabric/fabric.h"
#include "fabric/route_tables.h"
#include "mad/mad_engine.h"
#include "mad/smp_switch.h"

namespace ibfx {

// What the reader did, for the daemon's own metrics.
struct RouteReaderStats {
  std::uint64_t smps_sent = 0;       // submitted to the engine (its retries not counted)
  std::uint64_t smps_answered = 0;   // answered with status 0
  std::uint64_t smps_failed = 0;     // timed out or answered with an error status
  std::uint64_t smps_cancelled = 0;  // cut by a sweep's deadline, asked again later
  std::size_t switches = 0;          // switches in the tables
  std::size_t stale = 0;             // of them, whose last SMP went unanswered
  std::size_t incomplete = 0;        // of them, never read whole
  // The oldest table's last whole read (read_at of the least recently
  // confirmed complete table; epoch: none complete).
  std::chrono::system_clock::time_point oldest_read_at{};
  bool full_read_running = false;
  double full_read_seconds = 0;  // the last full read that finished
  std::uint64_t full_reads = 0;  // full reads finished
  std::uint64_t reroutes = 0;
};

// The share of mad.max_mads_per_second, when set, the route reads may
// take (the rest is the sweep's).
inline constexpr double kShareOfMadCap = 0.1;
// After a link went down or up: long enough for the subnet manager to
// notice and rewrite the tables (opensm sweeps on the port's trap at once,
// and every sweep_interval, 10 s by default), so that its re-route is
// found at once rather than within routes.reread_interval.
inline constexpr std::chrono::seconds kSettleAfterLinkChange{60};

class RouteReader {
 public:
  using Clock = std::chrono::steady_clock;

  RouteReader(MadEngine& engine, const RoutesConfig& config);
  RouteReader(const RouteReader&) = delete;
  RouteReader& operator=(const RouteReader&) = delete;

  // Before a sweep of `fabric`: takes note of its switches (a changed set
  // or LID starts a full pass; a switch gone is dropped) and queues at
  // most the budget's SMPs into the engine. `interval`: the sweep interval
  // (caps the budget at two of them). Does nothing when disabled or when
  // the engine cannot send SMPs.
  void submit(const Fabric& fabric, Clock::time_point now, std::chrono::milliseconds interval);
  // After the engine's run (every SMP completed or cancelled): publishes a
  // new RouteTables if anything changed.
  void after_run();

  // The tables as last published: null when disabled or before the first
  // switch is known. The same pointer until something changes; `version`
  // moves only when a table's content does (see RouteTables).
  std::shared_ptr<const RouteTables> tables() const { return published_; }
  const RouteReaderStats& stats() const { return stats_; }

  // A switch that left the fabric: its table goes, published at once.
  void forget(std::uint64_t guid);
  // New settings (SIGHUP): disabling drops every table; enabling again
  // starts afresh with a full read.
  void reload(const RoutesConfig& config);

 private:
  enum class BlockState : std::uint8_t { kToRead, kInFlight, kRead };
  // Priority of a switch's cycle: lower goes first.
  enum class Priority : std::uint8_t { kChanged = 0, kPass = 1, kRotation = 2 };
  struct Reader {
    std::uint64_t guid = 0;
    std::uint16_t lid = 0;
    // The cycle in progress; `cycle` tells its callbacks from an earlier
    // cycle's.
    std::uint32_t cycle = 0;
    bool info_asked = false;  // SwitchInfo in flight
    bool info_read = false;   // SwitchInfo answered: top, staging and blocks sized
    std::uint16_t top = 0;
    std::vector<std::uint8_t> staging;  // out port per LID, top + 1 entries
    std::vector<BlockState> blocks;
    std::size_t blocks_read = 0;
    std::size_t cursor = 0;  // the lowest block that may still be kToRead
    // The cycle reads into `staging` and replaces the table at its end (a
    // full pass, a re-route found, a table never read whole); otherwise
    // it compares each block with the table held.
    bool staged = false;
    bool in_pass = false;  // part of the running full pass
    bool changed = false;  // a re-route found on it: its cycle goes first
    bool stale = false;
    // This call's share of the budget, and SMPs of it in flight.
    std::size_t allot = 0;
    int inflight = 0;
  };

  void sync_fabric(const Fabric& fabric);
  void start_cycle(std::size_t index);
  void start_pass(Clock::time_point now);
  // Ends the full pass once every switch that answers has been read.
  void check_pass_done();
  std::size_t budget(Clock::time_point now, std::chrono::milliseconds interval);
  // Of that budget, what the rotation may take: every table once per
  // routes.reread_interval, or all of it while links settle.
  std::size_t rotation_budget(Clock::time_point now);
  void allot(std::size_t budget, std::size_t rotation);
  // Notes a link that went down or up, or moved: the SM re-routes after
  // it, so the rotation runs at the whole budget for kSettleAfterLinkChange.
  void note_links(const Fabric& fabric, Clock::time_point now);
  static Priority priority(const Reader& r);
  // SMPs the switch's cycle still needs (an estimate before SwitchInfo).
  std::size_t work_left(std::size_t index) const;
  // Queues the switch's next SMPs within its window and share.
  void pump(std::size_t index);
  void on_info(std::size_t index, std::uint32_t cycle, const MadCompletion& c);
  void on_block(std::size_t index, std::uint32_t cycle, std::uint32_t block,
                const MadCompletion& c);
  // Whether a completion carries an answer; keeps the switch's window,
  // its stale flag and the counts.
  bool accept(std::size_t index, const MadCompletion& c);
  void finish_cycle(std::size_t index);
  void note_change(std::size_t index);
  void clear();

  MadEngine& engine_;
  RoutesConfig config_;
  bool warned_no_smp_ = false;
  std::vector<Reader> readers_;
  // The tables, index-aligned with readers_; published as a copy.
  RouteTables tables_;
  std::shared_ptr<const RouteTables> published_;
  bool content_changed_ = false;  // since the last publication: version moves
  bool state_changed_ = false;    // stale flags or the full read's time moved
  bool confirmed_ = false;        // a table's read_at moved (published at most every 10 s)
  Clock::time_point last_publish_{};
  // The switches (GUID, LID) the tables were last synced to.
  std::vector<std::pair<std::uint64_t, std::uint16_t>> known_;
  std::uint16_t fabric_max_lid_ = 0;
  std::uint16_t max_top_seen_ = 0;  // the highest LinearFDBTop any switch reported
  std::uint32_t next_cycle_ = 0;
  bool pass_running_ = false;
  Clock::time_point pass_started_{};
  Clock::time_point last_call_{};
  bool called_ = false;
  double carry_ = 0;           // the budget's fraction of an SMP, kept for the next call
  double since_ = 0;           // seconds the last budget() covered
  double rotation_carry_ = 0;  // the same for the rotation's share
  std::uint64_t links_ = 0;    // a hash of the switch ports' links, as last seen
  bool links_seen_ = false;
  Clock::time_point settle_until_{};  // the rotation takes the whole budget until then
  std::size_t next_first_ = 0;        // round robin of the allotment over the switches
  RouteReaderStats stats_;
};

}  // namespace ibfx
