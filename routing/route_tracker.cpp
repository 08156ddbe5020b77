#include "routing/route_tracker.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/log.h"

namespace ibfx {

RouteTracker::~RouteTracker() {
  if (build_.valid()) build_.wait();
}

RouteTracker::Built RouteTracker::build(const Request& request,
                                        const std::shared_ptr<const RouteModel>& previous) {
  Built out;
  out.model = RouteModel::build(request.fabric, request.tables);
  out.at = request.at;
  // Tables that changed after they had been read whole are a re-route; a
  // new fabric with the same tables is not.
  if (previous && previous->tables_ptr() != request.tables) {
    RouteChange change = diff_routes(*previous, *out.model);
    if (!change.empty()) out.change = std::move(change);
  }
  return out;
}

void RouteTracker::start(Request request) {
  building_ = request;
  // The model the build is compared against is the one installed when it
  // lands: builds run one at a time, so it is the current one.
  build_ = std::async(std::launch::async, [request = std::move(request), previous = model_] {
    return build(request, previous);
  });
}

void RouteTracker::collect(bool wait) {
  if (!build_.valid()) return;
  if (!wait && build_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  install(build_.get());
  building_ = {};
  if (next_) {
    Request next = std::move(*next_);
    next_.reset();
    if (!model_ || model_->fabric_ptr() != next.fabric || model_->tables_ptr() != next.tables) {
      start(std::move(next));
    }
  }
}

void RouteTracker::wait_for_build() {
  while (build_.valid()) collect(true);
}

void RouteTracker::install(Built built) {
  if (built.change) {
    RouteChange& change = *built.change;
    change.id = next_id_++;
    change.at = built.at;
    ++changes_total_;
    log_info("routes changed: " + std::to_string(change.destinations_moved) +
             " destinations moved, " + std::to_string(change.entries_changed) +
             " forwarding entries on " + std::to_string(change.switches_changed) + " switches");
    auto list = std::make_shared<std::vector<RouteChange>>(*changes_);
    list->push_back(std::move(change));
    if (list->size() > kRouteEventsKept) {
      list->erase(list->begin(),
                  list->begin() + static_cast<std::ptrdiff_t>(list->size() - kRouteEventsKept));
    }
    changes_ = std::move(list);
  }
  model_ = std::move(built.model);
  evidence_ = route_evidence(*model_);
  senders_.clear();
  balance_topology_.reset();
}

void RouteTracker::update(const std::shared_ptr<const Fabric>& fabric,
                          const std::shared_ptr<const RouteTables>& tables, double now) {
  fabric_ = fabric;
  collect(false);
  if (!fabric || !tables) {
    // Routes off, or no table read yet: a build under way lands and is
    // dropped with the rest.
    next_.reset();
    if (build_.valid()) collect(true);
    model_.reset();
    return;
  }
  if (model_ && model_->fabric_ptr() == fabric && model_->tables_ptr() == tables) {
    next_.reset();
    return;
  }
  Request request{fabric, tables, now};
  if (!background_) {
    if (build_.valid()) collect(true);
    install(build(request, model_));
    return;
  }
  if (!build_.valid()) {
    start(std::move(request));
  } else if (building_.fabric != fabric || building_.tables != tables) {
    next_ = std::move(request);  // the newest only: started when the running one lands
  }
}

RouteChangeState RouteTracker::change_state() const {
  return {*changes_, changes_total_, next_id_};
}

void RouteTracker::restore(RouteChangeState state) {
  if (state.changes.size() > kRouteEventsKept) {
    state.changes.erase(state.changes.begin(),
                        state.changes.end() - static_cast<std::ptrdiff_t>(kRouteEventsKept));
  }
  std::uint64_t next_id = state.next_id;
  for (const RouteChange& c : state.changes) next_id = std::max(next_id, c.id + 1);
  next_id_ = next_id;
  changes_total_ = std::max<std::uint64_t>(state.changes_total, state.changes.size());
  changes_ = std::make_shared<const std::vector<RouteChange>>(std::move(state.changes));
}

RouteSweep RouteTracker::after_analysis(const SweepAnalysis& analysis) {
  RouteSweep out;
  out.changes = changes_;
  out.changes_total = changes_total_;
  if (!model_) return out;
  out.model = model_;  // /route answers 503 while it is of another fabric
  if (!usable()) return out;
  if (analysis.topology && analysis.topology != balance_topology_) {
    balance_ = route_balance(*model_, *analysis.topology);
    balance_topology_ = analysis.topology;
  }
  out.balance = balance_;
  out.senders = senders_of_roots(*model_, senders_, analysis.result.ports, analysis.samples,
                                 analysis.result.congestion);
  return out;
}

}  // namespace ibfx
