#include "pipeline/events_stage.h"

#include "base/log.h"
#include "base/utc_time.h"
#include "links/link_event_state.h"
#include "pipeline/jobs_stage.h"

namespace ibfx {
namespace {

// What `file` holds, decoded; nothing on a first start, and a file
// `decode` refuses is kept aside (<file>.bad) for the operator.
template <class State>
std::optional<State> read_state(StateFile& file,
                                bool (*decode)(std::string_view, State&, std::string&)) {
  const std::optional<std::string> text = file.read();
  if (!text) return std::nullopt;
  State state;
  std::string error;
  if (!decode(*text, state, error)) {
    file.set_aside(error);
    return std::nullopt;
  }
  return state;
}

}  // namespace

void EventsStage::keep_in(const std::string& directory) {
  if (directory.empty()) {
    log_info(
        "state_directory is empty: congestion, link and route events will not survive a restart");
    return;
  }
  state_file_ = std::make_unique<EventStateFile>(directory);
  if (auto state = state_file_->load()) {
    tracker_.restore(std::move(*state), unix_seconds_now());
    saved_version_ = tracker_.version();
  }
  restored_ = tracker_.events();
  link_state_file_ =
      std::make_unique<StateFile>(directory, "link_events.json", "link events",
                                  EventStateFile::kMinWriteInterval, "ibfx-linkstate");
  if (auto state = read_state(*link_state_file_, decode_link_event_state)) {
    log_info("restored " + std::to_string(state->events.size()) + " link events from " +
             link_state_file_->path());
    links_.restore(std::move(*state), unix_seconds_now());
    saved_links_version_ = links_.version();
  }
  restored_links_ = links_.events();
  route_state_file_ =
      std::make_unique<StateFile>(directory, "route_events.json", "route events",
                                  EventStateFile::kMinWriteInterval, "ibfx-routestate");
  if (auto state = read_state(*route_state_file_, decode_route_change_state)) {
    log_info("restored " + std::to_string(state->changes.size()) + " route events from " +
             route_state_file_->path());
    saved_route_changes_ = state->changes_total;
    restored_routes_ = std::move(state);
  }
}

void EventsStage::run(SweepFrame& frame) {
  SnapshotInputs& in = frame.snapshot;
  if (routes_ != nullptr) observe_routes(*routes_, frame.now);
  observe(in.analysis, *in.fabric, in.node_names, frame.now,
          JobsStage::root_job_ids(in.jobs, in.analysis),
          JobsStage::root_senders(in.routes, in.jobs, in.analysis, *in.fabric, in.node_names));
  if (in.links) observe_links(*in.links, in.node_names, frame.now);
  in.events = events();
  in.event_counters = counters();
  in.link_events = link_events();
}

void EventsStage::observe_routes(const RouteTracker& routes, double now) {
  if (!route_state_file_ || routes.changes_total() == saved_route_changes_) return;
  saved_route_changes_ = routes.changes_total();
  route_state_file_->save(
      [state = routes.change_state(), now] { return encode_route_change_state(state, now); });
}

void EventsStage::observe(const SweepAnalysis& analysis, const Fabric& fabric,
                          const std::vector<std::string>& node_names, double now,
                          const std::vector<std::vector<std::uint64_t>>& root_jobs,
                          const std::vector<std::vector<EventSender>>& root_senders) {
  tracker_.observe(analysis, fabric, node_names, now, root_jobs, root_senders);
  save_if_changed(now);
}

void EventsStage::observe_links(const LinkHealthReport& report,
                                const std::vector<std::string>& node_names, double now) {
  links_.observe(report, node_names, now);
  save_if_changed(now);
}

void EventsStage::stop() {
  if (!state_file_) return;
  // The last sweep's events, written before the process exits.
  save_if_changed(unix_seconds_now());
  state_file_->stop();
  link_state_file_->stop();
  route_state_file_->stop();
}

void EventsStage::save_if_changed(double now) {
  if (state_file_ && tracker_.version() != saved_version_) {
    saved_version_ = tracker_.version();
    state_file_->save(tracker_.state(), now);
  }
  if (link_state_file_ && links_.version() != saved_links_version_) {
    saved_links_version_ = links_.version();
    link_state_file_->save(
        [state = links_.state(), now] { return encode_link_event_state(state, now); });
  }
}

}  // namespace ibfx
