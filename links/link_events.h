// Link events (issue #34): each condition a cable had, followed over sweeps
// as one event (start, end, peak BER, downs), never one per sweep. Fed the
// LinkHealthReport of each sweep; served next to the congestion events on
// /events (kind "link"). Bounded like the congestion events: the active
// events are at most the unhealthy links' conditions, the ended ones the
// last kMaxEnded within kMaxAgeSeconds (analysis/congestion_events.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/congestion_events.h"
#include "links/link_report.h"

namespace ibfx {

struct LinkEvent {
  std::uint64_t id = 0;  // 1, 2, ... in order of start; never reused
  // Both ends; `node` is the end whose receiver saw the worse direction when
  // the event started (for a one-direction condition, the end to look at).
  EventNode node;
  std::uint8_t node_port = 0;
  EventNode remote;
  std::uint8_t remote_port = 0;
  LinkCondition condition = LinkCondition::kNone;
  double start = 0;  // Unix seconds
  double last_seen = 0;
  std::optional<double> end;
  double peak_ber = -1;     // the worse direction's symbol BER at its worst; < 0: none
  std::uint32_t downs = 0;  // the most LinkDowned increments in an hour it saw
  bool active() const { return !end.has_value(); }
  double duration() const { return end.value_or(last_seen) - start; }
  friend bool operator==(const LinkEvent&, const LinkEvent&) = default;
};

using LinkEventList = std::vector<LinkEvent>;  // newest start first

// What the state directory keeps of a LinkEventTracker across a restart
// (links/link_event_state.h): every event, active and ended, and the next id.
struct LinkEventTrackerState {
  std::uint64_t next_id = 1;
  LinkEventList events;
  friend bool operator==(const LinkEventTrackerState&, const LinkEventTrackerState&) = default;
};

class LinkEventTracker {
 public:
  // One sweep's report; `node_names` parallel to the fabric's nodes (the
  // report's node indices); `now` Unix seconds.
  void observe(const LinkHealthReport& report, const std::vector<std::string>& node_names,
               double now);
  // The events as this sweep left them, newest start first.
  std::shared_ptr<const LinkEventList> events() const { return list_; }
  // Changes whenever the events do (what a state file would save).
  std::uint64_t version() const { return version_; }

  // A restarted daemon's link health starts with empty BER windows and no
  // downs: a cable that still errs needs min_errors new errors, a flapping
  // one new downs, before its condition shows again. An event restored
  // active is kept that long without being seen, then ends at the
  // last_seen of the run that saved it.
  static constexpr double kRestoredGraceSeconds = 60;
  LinkEventTrackerState state() const;
  // A previous run's events, before the first observe(): ids continue
  // after them; an active one continues if its link shows the condition
  // within kRestoredGraceSeconds of `now` (Unix seconds).
  void restore(LinkEventTrackerState state, double now);

 private:
  using Key = std::tuple<std::uint64_t, std::uint8_t, std::uint64_t, std::uint8_t, LinkCondition>;
  void publish();

  std::uint64_t next_id_ = 1;
  std::map<Key, LinkEvent> active_;
  std::vector<LinkEvent> ended_;  // oldest first
  std::shared_ptr<const LinkEventList> list_ = std::make_shared<const LinkEventList>();
  std::uint64_t version_ = 0;
  double restored_at_ = 0;  // Unix seconds of restore(); 0: nothing restored
};

}  // namespace ibfx
