// The route tracker, which the pipeline's routes stage runs
// (pipeline/route_stage.h): the route model of the current fabric and
// tables, rebuilt when either changes; the re-routes it saw, as events; the
// routing balance of each switch and the senders behind each root of
// congestion, for each sweep. Sweep thread.
//
// In the background (the daemon), a model is built on a thread of its own:
// at 98k ports a build takes ~0.3 s (docs/benchmarks.md), which the sweep
// thread of a 1 s interval cannot spare. Until it lands, the sweeps use the
// model they had while the fabric is the same (a re-route shows a sweep or
// two late), and none when the fabric changed (a model's node indices are
// those of its own fabric).
#pragma once

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include "analysis/route_evidence.h"
#include "analysis/sweep_analyzer.h"
#include "fabric/route_tables.h"
#include "routing/root_senders.h"
#include "routing/route_balance.h"
#include "routing/route_change_state.h"
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

class RouteTracker {
 public:
  RouteTracker() = default;
  ~RouteTracker();  // waits for a build under way
  RouteTracker(const RouteTracker&) = delete;
  RouteTracker& operator=(const RouteTracker&) = delete;

  // Builds on a thread of its own from now on (the daemon's background
  // mode); otherwise update() builds before it returns (tests, --once).
  void build_in_background(bool on) { background_ = on; }

  // Each sweep, before the analysis: the fabric the sweep ran on and the
  // tables the sweep stage holds (null: none). `now`: the sweep's time in
  // Unix seconds. Rebuilds the model when the fabric or the tables changed;
  // tables that changed after they had been read whole are a re-route.
  void update(const std::shared_ptr<const Fabric>& fabric,
              const std::shared_ptr<const RouteTables>& tables, double now);

  // Waits for a background build under way and takes it (tests).
  void wait_for_build();
  bool building() const { return build_.valid(); }

  // What the analysis needs of the routes (null: none known, or the model
  // is of another fabric than this sweep's).
  const RouteEvidence* evidence() const { return usable() ? &evidence_ : nullptr; }

  // The rest, after the analysis: balance (against its topology) and the
  // senders behind its roots.
  RouteSweep after_analysis(const SweepAnalysis& analysis);

  const std::shared_ptr<const RouteModel>& model() const { return model_; }

  // The re-routes kept, to save (route_events.json) and to restore at
  // start-up, before the first update(): /events and
  // infiniband_route_changes_total carry on across a restart.
  RouteChangeState change_state() const;
  void restore(RouteChangeState state);
  std::uint64_t changes_total() const { return changes_total_; }

 private:
  // What a build hands back: the model, and the re-route it found against
  // the model it replaces.
  struct Built {
    std::shared_ptr<const RouteModel> model;
    std::optional<RouteChange> change;
    double at = 0;
  };
  struct Request {
    std::shared_ptr<const Fabric> fabric;
    std::shared_ptr<const RouteTables> tables;
    double at = 0;
  };
  static Built build(const Request& request, const std::shared_ptr<const RouteModel>& previous);
  void start(Request request);
  void collect(bool wait);
  void install(Built built);
  bool usable() const { return model_ && model_->fabric_ptr() == fabric_; }

  bool background_ = false;
  std::shared_ptr<const Fabric> fabric_;  // this sweep's
  std::future<Built> build_;              // under way (valid) or none
  Request building_;                      // what build_ is of
  std::optional<Request> next_;           // asked for while build_ ran
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
