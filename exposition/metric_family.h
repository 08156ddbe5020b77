// One metric family as the exposition declares it: name, type, help and the
// labels its series carry, defined once (exposition/metric_families.h) and used
// by every renderer. Per-port counter families are the exception: they come
// from the fabric's counter table (fabric/counters.h CounterInfo).
#pragma once

#include <string_view>

namespace ibfx {

struct MetricFamily {
  std::string_view name;
  std::string_view type;  // "counter", "gauge", "histogram"
  std::string_view help;
  std::string_view labels;  // the label names of its series, comma-separated
};

}  // namespace ibfx
