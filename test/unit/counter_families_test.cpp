#include "exposition/counter_families.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

namespace ibfx {
namespace {

TEST_CASE("Every per-port counter has one well-formed counter family", "[counter_families]") {
  std::set<std::string_view> names;
  for (std::size_t c = 0; c < kCounterCount; ++c) {
    const MetricFamily& f = counter_family(c);
    INFO(f.name);
    CHECK(f.name.starts_with("infiniband_port_"));
    CHECK(f.name.ends_with("_total"));  // a Prometheus counter
    CHECK(f.type == "counter");
    CHECK(f.labels == "node_guid,port");
    CHECK_FALSE(f.help.empty());
    CHECK(names.insert(f.name).second);
  }
  for (std::size_t c = 0; c < kLaneCounterCount; ++c) {
    const auto lane = static_cast<LaneCounter>(c);
    const MetricFamily& f = lane_counter_family(lane);
    INFO(f.name);
    CHECK(f.type == "counter");
    // The lane label the renderer adds is the one the fabric's counter table names.
    CHECK(f.labels == "node_guid,port," + std::string(lane_counter_info(lane).label));
    CHECK(names.insert(f.name).second);
  }
}

TEST_CASE("A counter's short name is its family name without prefix and suffix",
          "[counter_families]") {
  CHECK(counter_short_name(Counter::kSymbolErrors) == "symbol_errors");
  CHECK(counter_short_name(Counter::kTransmitWait) == "transmit_wait");
  CHECK(counter_short_name(Counter::kPortXmitTimeCong) == "transmit_congestion_time");
  CHECK(counter_family(Counter::kTransmitDataBytes).help.find("PortXmitData") !=
        std::string_view::npos);
}

}  // namespace
}  // namespace ibfx
