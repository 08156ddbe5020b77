// The routes stage of the pipeline: the route model of the current fabric
// and tables, rebuilt when either changes; the re-routes it saw, as events;
// the routing balance of each switch and the senders behind each root of
// congestion, for each sweep. Sweep thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "analysis/route_evidence.h"
#include "analysis/sweep_analyzer.h"
#include "fabric/route_tables.h"
#include "routing/root_senders.h"
#include "routing/route_balance.h"
#include "routing/route_changes.h"
#include "routing/route_model.h"

namespace ibfx {

// How many re-route events are kept (the oldest go first).
inline constexpr std::size_t kRouteEventsKept = 100;

struct RouteSweep {
  std::shared_ptr<const RouteModel> model;  // null: no tables read (or routes off)
  std::vector<SwitchRouteBalance> balance;  // by node index
  std::vector<RootSenders> senders;         // per root that the model knows
  std::shared_ptr<const std::vector<RouteChange>> changes =
      std::make_shared<const std::vector<RouteChange>>();  // oldest first
  std::uint64_t changes_total = 0;
};

class RouteStage {
 public:
  // Each sweep, before the analysis: the fabric the sweep ran on and the
  // tables the sweep stage holds (null: none). `now`: the sweep's time in
  // Unix seconds. Rebuilds the model when the fabric or the tables changed;
  // tables that changed after they had been read whole are a re-route.
  void update(const std::shared_ptr<const Fabric>& fabric,
              const std::shared_ptr<const RouteTables>& tables, double now);

  // What the analysis needs of the routes (null: none known).
  const RouteEvidence* evidence() const { return model_ ? &evidence_ : nullptr; }

  // The rest, after the analysis: balance (against its topology) and the
  // senders behind its roots.
  RouteSweep after_analysis(const SweepAnalysis& analysis);

  const std::shared_ptr<const RouteModel>& model() const { return model_; }

 private:
  std::shared_ptr<const RouteModel> model_;
  RouteEvidence evidence_;
  SenderCache senders_;
  // What balance_ was computed against (null: compute again).
  std::shared_ptr<const Topology> balance_topology_;
  std::vector<SwitchRouteBalance> balance_;
  std::shared_ptr<const std::vector<RouteChange>> changes_ =
      std::make_shared<const std::vector<RouteChange>>();
  std::uint64_t changes_total_ = 0;
  std::uint64_t next_id_ = 1;
};

}  // namespace ibfx
