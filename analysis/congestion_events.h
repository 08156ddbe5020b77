// Congestion events: the roots of congestion followed over sweeps. Each
// sweep's forest (analysis/congestion.h) names its roots; a root seen again
// continues its event, a root not seen for a grace period ends it. An
// operator paged at 2 AM reads "this tree started at 02:13, peaked at 02:20
// with 40 victims, ended at 02:31" instead of one verdict per sweep.
//
// A root's identity is (node GUID, port number): stable across discoveries
// and restarts, unlike node and port indices. One tree that flickers (its
// root drops out of the forest for a sweep or two, as noisy counters make
// it) stays ONE event: an event ends only after its root was absent from
// kGraceSweeps consecutive sweeps AND for kGraceSeconds. A root that moves
// (another port becomes the root of the same traffic) is a new event at
// once; the old one ends after its grace. A root whose cause is
// `unexplained` (no mechanism found: what a tree's first or last, partial
// interval can leave for a sweep) opens its event only once it has been a
// root in kPersistSweeps consecutive sweeps; the event then starts at the
// first of them. docs/scores.md, "Congestion events", says the same for
// operators.
//
// Pure computation; fed one SweepAnalysis per sweep. Bounded: the active
// events are at most the roots of kGraceSweeps sweeps (top_k each), the
// ended ones the last kMaxEnded within kMaxAgeSeconds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/congestion.h"
#include "analysis/sweep_analyzer.h"
#include "fabric/fabric.h"

namespace ibfx {

inline constexpr std::size_t kCauseCount = 8;  // CongestionCause values
// Absent from this many consecutive sweeps...
inline constexpr std::uint32_t kGraceSweeps = 3;
// ...and for this long (whichever is later) before an event ends: at a 1 s
// interval a root flickering out for up to half a minute is still one
// event; at 60 s, three sweeps.
inline constexpr double kGraceSeconds = 30;
// Consecutive sweeps an `unexplained` root must last before it is an event:
// as many as the end's grace, so that what ends a tree cannot start one.
inline constexpr std::uint32_t kPersistSweeps = kGraceSweeps;
// History: the last 1,000 ended events, none that ended over 7 days ago.
inline constexpr std::size_t kMaxEnded = 1000;
inline constexpr double kMaxAgeSeconds = 7 * 24 * 3600.0;
// Leaves listed per event (a tree on a 16k-GPU fabric can touch hundreds;
// beyond this, leaves_truncated says the list is not all of them).
inline constexpr std::size_t kMaxLeavesPerEvent = 64;
// Slurm jobs listed per event (jobs/job_join.h: the jobs whose ports were
// in its tree), beyond which jobs_truncated says so.
inline constexpr std::size_t kMaxJobsPerEvent = 64;

struct EventNode {
  std::uint64_t guid = 0;
  std::string name;  // node-name-map, else NodeDescription: untrusted text
  friend bool operator==(const EventNode&, const EventNode&) = default;
};

// An HCA port whose routes cross an event's root port, as the routes
// stage ranked it at the event's peak (routing/root_senders.h): who was
// sending into it, and the Slurm jobs on that port.
struct EventSender {
  EventNode node;
  std::uint8_t port = 0;
  double bytes_per_second = 0;
  std::vector<std::uint64_t> jobs;  // ascending
  friend bool operator==(const EventSender&, const EventSender&) = default;
};
// Senders an event keeps (the routes stage ranks ten per root).
inline constexpr std::size_t kMaxSendersPerEvent = 10;

struct CongestionEvent {
  std::uint64_t id = 0;  // 1, 2, ... in order of start; never reused
  // The root port, and the far end of its cable (where the stalled
  // traffic was going): guid 0 when unlinked.
  EventNode root;
  std::uint8_t root_port = 0;  // port number
  EventNode far;
  std::uint8_t far_port = 0;
  // The cause the analysis gave in the sweep of the peak score.
  CongestionCause cause = CongestionCause::kUnexplained;
  // Unix seconds. start: the beginning of the first interval whose forest
  // had this root; last_seen: the end of the latest one; end: last_seen
  // once the event ended (absent while active).
  double start = 0;
  double last_seen = 0;
  std::optional<double> end;
  double peak_score = 0;
  double peak_at = 0;  // end of the interval of the peak score
  std::uint64_t peak_victims = 0;
  std::uint64_t sweeps = 0;         // sweeps whose forest had this root
  std::uint32_t absent_sweeps = 0;  // consecutive sweeps without it (active events)
  std::vector<int> rails;           // rails of the ports of its tree, ascending
  std::vector<EventNode> leaves;    // leaf switches of its tree, in order first seen
  bool leaves_truncated = false;    // it touched more than kMaxLeavesPerEvent
  // Slurm job ids whose ports were in its tree in any sweep (jobs.source;
  // empty without one), ascending.
  std::vector<std::uint64_t> jobs;
  bool jobs_truncated = false;  // more than kMaxJobsPerEvent
  // Seconds of congestion so far: the intervals in which the root was seen.
  double congested_seconds = 0;
  // The top senders behind the root in the sweep of its peak score (the
  // first sweep that named any, until a higher peak); empty when the
  // routes were not known (issue #41).
  std::vector<EventSender> senders;

  bool active() const { return !end.has_value(); }
  friend bool operator==(const CongestionEvent&, const CongestionEvent&) = default;
  // end - start, or last_seen - start while active.
  double duration() const { return end.value_or(last_seen) - start; }
};

// Counter totals by cause (CongestionCause as index), for
// infiniband_congestion_events_total / _event_seconds_total.
struct EventCounters {
  std::array<std::uint64_t, kCauseCount> started{};
  std::array<double, kCauseCount> seconds{};
  friend bool operator==(const EventCounters&, const EventCounters&) = default;
};

// Everything the tracker needs to continue after a restart (the state file,
// analysis/congestion_event_state.h).
struct EventTrackerState {
  std::uint64_t next_id = 1;
  EventCounters counters;
  std::vector<CongestionEvent> events;  // active and ended, any order
  friend bool operator==(const EventTrackerState&, const EventTrackerState&) = default;
};

// The events as one sweep left them, immutable once built: newest start
// first. Shared with every snapshot until the next sweep changes them.
using EventList = std::vector<CongestionEvent>;

class CongestionEventTracker {
 public:
  // One sweep: `analysis` as SweepAnalyzer::analyze returned it for
  // `fabric` (with `node_names`); `now` the Unix seconds at the end of its
  // interval (the sweep's start). An analysis without a result (the first
  // sweep) changes nothing: no evidence is not absence.
  // `root_jobs`, when given, is parallel to the forest's roots: the Slurm
  // job ids in each root's tree this sweep (JobJoinResult::roots).
  // `root_senders`, when given, is parallel to them too: the top senders
  // behind each root this sweep.
  void observe(const SweepAnalysis& analysis, const Fabric& fabric,
               const std::vector<std::string>& node_names, double now,
               const std::vector<std::vector<std::uint64_t>>& root_jobs = {},
               const std::vector<std::vector<EventSender>>& root_senders = {});

  // Continues from a saved state (start-up): events whose root has been
  // gone longer than the grace end at their last_seen; the history bounds
  // apply at `now`.
  void restore(EventTrackerState state, double now);
  EventTrackerState state() const;

  // Newest start first; the same pointer until something changed.
  std::shared_ptr<const EventList> events() const { return list_; }
  const EventCounters& counters() const { return counters_; }
  // Bumped whenever events() or counters() changed (what the state file
  // writer watches).
  std::uint64_t version() const { return version_; }
  // Roots waiting for kPersistSweeps before they are events (not listed,
  // not counted, not saved).
  std::size_t pending() const { return pending_.size(); }

 private:
  // observe's steps (congestion_events.cpp) and what they share: one
  // sweep's tree of one root, and the sweep.
  struct TreeSeen;
  struct SweepSeen;
  // The trees of this sweep: each top-K root and the ports chained to it.
  static std::vector<TreeSeen> trees_of(const SweepAnalysis& analysis, const Fabric& fabric);
  // One tree continues its event, or its pending event (into
  // `still_pending` while it waits), or starts one; true when an event
  // changed.
  bool follow_tree(const TreeSeen& tree, const SweepSeen& sweep, std::vector<bool>& seen,
                   std::vector<CongestionEvent>& still_pending);
  // One sweep's tree into its event (or pending event): seen now, for one
  // more interval, its peak, and what its tree touched.
  static void absorb(CongestionEvent& e, const TreeSeen& tree, const EventNode& root,
                     const SweepSeen& sweep, const std::vector<std::uint64_t>* jobs,
                     const std::vector<EventSender>* senders);
  // One more sweep absent for the active events this sweep did not see;
  // true when there were any.
  bool mark_absent(const std::vector<bool>& seen);
  // Opens an event for `draft` (a new root, or a pending one that has
  // persisted): its id, and the counters its sweeps so far add up to.
  void open(CongestionEvent draft);
  void end_expired(double now);
  void trim(double now);
  void publish();

  std::uint64_t next_id_ = 1;
  EventCounters counters_;
  std::vector<CongestionEvent> active_;  // by id
  // Roots seen in consecutive sweeps up to now whose cause has been
  // `unexplained`: events in the making (id 0).
  std::vector<CongestionEvent> pending_;
  std::deque<CongestionEvent> ended_;  // by end, oldest first
  std::shared_ptr<const EventList> list_ = std::make_shared<const EventList>();
  std::uint64_t version_ = 0;
};

}  // namespace ibfx
