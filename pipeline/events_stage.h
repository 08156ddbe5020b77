// The events stage of the pipeline: the congestion events followed over
// sweeps (analysis/congestion_events.h), the link events
// (links/link_events.h) and, with a state directory, where both are kept
// across restarts (pipeline/event_state_file.h, link_events.json), with the
// re-routes the routes stage saw (route_events.json). Each sweep's
// analysis passes through it once; it is the one place events are saved,
// after a sweep that changed them and at shutdown. Sweep thread, but for
// keep_in() and restored() (before start) and stop() (after the sweeps).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/congestion_events.h"
#include "links/link_events.h"
#include "pipeline/event_state_file.h"
#include "pipeline/stage.h"
#include "pipeline/state_file.h"
#include "routing/route_tracker.h"

namespace ibfx {

class EventsStage final : public Stage {
 public:
  // `routes`: the routes stage's tracker, whose re-routes are saved with
  // the events (null: no routes, as in tests of the events alone).
  explicit EventsStage(const RouteTracker* routes = nullptr) : routes_(routes) {}

  std::string_view name() const override { return "events"; }
  // The frame's re-routes (observe_routes), roots with the jobs they hurt
  // and the senders behind them (observe), and link health (observe_links)
  // into the events; the frame's events, counters and link events from
  // them.
  void run(SweepFrame& frame) override;

  // Keeps the events in `directory` (Config::state_directory; empty:
  // nowhere, said once in the log): restores what a previous run saved
  // there and saves every change.
  void keep_in(const std::string& directory);
  // What keep_in() restored (null without a state directory): what /events
  // shows until the first sweep is published.
  std::shared_ptr<const EventList> restored() const { return restored_; }
  // The link events keep_in() restored (null without a state directory).
  std::shared_ptr<const LinkEventList> restored_links() const { return restored_links_; }

  // One sweep's analysis of `fabric` (CongestionEventTracker::observe),
  // saved if it changed the events. `now`: Unix seconds at the end of the
  // sweep's interval (its start).
  void observe(const SweepAnalysis& analysis, const Fabric& fabric,
               const std::vector<std::string>& node_names, double now,
               const std::vector<std::vector<std::uint64_t>>& root_jobs,
               const std::vector<std::vector<EventSender>>& root_senders = {});

  std::shared_ptr<const EventList> events() const { return tracker_.events(); }

  // One sweep's link health (LinkEventTracker::observe), saved like the
  // congestion events (link_events.json) if it changed the link events.
  void observe_links(const LinkHealthReport& report, const std::vector<std::string>& node_names,
                     double now);
  std::shared_ptr<const LinkEventList> link_events() const { return links_.events(); }
  const EventCounters& counters() const { return tracker_.counters(); }

  // The re-routes keep_in() restored (route_events.json), for the routes
  // stage to carry on from; nothing without a state directory or a file.
  std::optional<RouteChangeState> take_restored_routes() {
    return std::exchange(restored_routes_, {});
  }
  // After each sweep's routes: saved when the stage saw a new re-route.
  void observe_routes(const RouteTracker& routes, double now);

  // Saves what the last sweep changed and stops the writer (shutdown, after
  // the sweeps). Idempotent.
  void stop() override;

 private:
  // The one place the events are saved: when they changed since the last
  // save, at `now` (Unix seconds).
  void save_if_changed(double now);

  const RouteTracker* routes_ = nullptr;
  CongestionEventTracker tracker_;
  std::unique_ptr<EventStateFile> state_file_;  // null: not kept
  std::uint64_t saved_version_ = 0;
  std::shared_ptr<const EventList> restored_;
  LinkEventTracker links_;
  std::unique_ptr<StateFile> link_state_file_;  // null: not kept
  std::uint64_t saved_links_version_ = 0;
  std::shared_ptr<const LinkEventList> restored_links_;
  std::unique_ptr<StateFile> route_state_file_;  // null: not kept
  std::uint64_t saved_route_changes_ = 0;
  std::optional<RouteChangeState> restored_routes_;
};

}  // namespace ibfx
