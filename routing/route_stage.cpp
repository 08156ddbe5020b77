#include "routing/route_stage.h"

#include "base/log.h"

namespace ibfx {

void RouteStage::update(const std::shared_ptr<const Fabric>& fabric,
                        const std::shared_ptr<const RouteTables>& tables, double now) {
  if (!fabric || !tables) {
    model_.reset();
    return;
  }
  if (model_ && model_->fabric_ptr() == fabric && model_->tables_ptr() == tables) return;
  auto built = RouteModel::build(fabric, tables);
  if (model_ && model_->tables_ptr() != tables) {
    RouteChange change = diff_routes(*model_, *built);
    if (!change.empty()) {
      change.id = next_id_++;
      change.at = now;
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
  }
  model_ = std::move(built);
  evidence_ = route_evidence(*model_);
  senders_.clear();
  balance_topology_.reset();
}

RouteSweep RouteStage::after_analysis(const SweepAnalysis& analysis) {
  RouteSweep out;
  out.changes = changes_;
  out.changes_total = changes_total_;
  if (!model_) return out;
  out.model = model_;
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
