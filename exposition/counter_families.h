// The Prometheus family of every per-port counter the sweep reads
// (fabric/counters.h Counter and LaneCounter): name, help and labels, defined
// once here, in the render layer, beside the other families
// (exposition/metric_families.h). The fabric's tables say how a counter is
// read; this one says how it is exposed.
#pragma once

#include <cstddef>
#include <string_view>

#include "exposition/metric_family.h"
#include "fabric/counters.h"

namespace ibfx {

const MetricFamily& counter_family(Counter c);
inline const MetricFamily& counter_family(std::size_t i) {
  return counter_family(static_cast<Counter>(i));
}
const MetricFamily& lane_counter_family(LaneCounter c);

// The family name without "infiniband_port_" and "_total" (symbol_errors):
// the `counter` label of the exporter's own per-counter metrics.
std::string_view counter_short_name(Counter c);

}  // namespace ibfx
