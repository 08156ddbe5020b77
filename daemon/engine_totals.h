// The running totals the MAD engine (MadEngineStats) and the counter
// accumulator (AccumulatorStats) already keep, exported as Prometheus
// counters by a prometheus::Collectable that reads them when the daemon's
// metrics are serialized: prometheus-cpp's way for state that counts
// itself (the Go client's CounterFunc / custom Collector), rather than
// prometheus::Counter objects fed the difference since the last sweep.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <mutex>
#include <vector>

#include "fabric/counter_accumulator.h"
#include "mad/mad_engine.h"

namespace ibfx {

class EngineTotals final : public prometheus::Collectable {
 public:
  // The engine's and the accumulator's cumulative stats as of now (the
  // sweep thread, after each sweep).
  void set(const MadEngineStats& mad, const AccumulatorStats& accumulator);

  // infiniband_exporter_mad_requests_total{result}, ..._optional_probes_
  // unanswered_total, ..._mad_retries_total, ..._mad_late_responses_total,
  // ..._mad_requests_cancelled_total, and per counter
  // ..._counters_saturated_total (narrow counters only),
  // ..._counters_reset_externally_total and ..._counters_cleared_total
  // (counters a PortCounters Set can clear). Any thread.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable std::mutex mu_;
  MadEngineStats mad_;
  AccumulatorStats accumulator_;
};

}  // namespace ibfx
