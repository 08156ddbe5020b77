// EngineTotals: the MAD engine's and the accumulator's own totals as
// Prometheus counter families, read when collected.
#include "daemon/engine_totals.h"

#include <prometheus/text_serializer.h>

#include <catch2/catch.hpp>
#include <string>

#include "exposition/counter_families.h"
#include "mad/pma.h"

using namespace ibfx;

namespace {

const prometheus::MetricFamily* family(const std::vector<prometheus::MetricFamily>& families,
                                       const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

double value(const prometheus::MetricFamily& f, const std::string& label_value) {
  for (const auto& m : f.metric) {
    if ((label_value.empty() && m.label.empty()) ||
        (!m.label.empty() && m.label[0].value == label_value)) {
      return m.counter.value;
    }
  }
  return -1;
}

}  // namespace

TEST_CASE("EngineTotals exports the engine's totals as they are when collected",
          "[engine_totals]") {
  EngineTotals totals;
  auto families = totals.Collect();
  REQUIRE(families.size() == 8);
  for (const auto& f : families) {
    CHECK(f.type == prometheus::MetricType::Counter);
    CHECK_FALSE(f.help.empty());
  }
  const auto* requests = family(families, "infiniband_exporter_mad_requests_total");
  REQUIRE(requests != nullptr);
  REQUIRE(requests->metric.size() == 3);
  CHECK(value(*requests, "ok") == 0);

  MadEngineStats mad;
  mad.ok = 120;
  mad.timeouts = 3;
  mad.errors = 1;
  mad.retries = 7;
  mad.late_or_unknown = 2;
  mad.optional_unanswered = 5;
  mad.cancelled = 9;
  AccumulatorStats acc;
  acc.saturations[static_cast<std::size_t>(Counter::kSymbolErrors)] = 4;
  acc.external_clears[static_cast<std::size_t>(Counter::kTransmitDataBytes)] = 6;
  acc.clears[static_cast<std::size_t>(Counter::kLinkDowned)] = 8;
  totals.set(mad, acc);
  families = totals.Collect();
  requests = family(families, "infiniband_exporter_mad_requests_total");
  CHECK(value(*requests, "ok") == 120);
  CHECK(value(*requests, "timeout") == 3);
  CHECK(value(*requests, "error") == 1);
  CHECK(value(*family(families, "infiniband_exporter_mad_retries_total"), "") == 7);
  CHECK(value(*family(families, "infiniband_exporter_mad_late_responses_total"), "") == 2);
  CHECK(value(*family(families, "infiniband_exporter_optional_probes_unanswered_total"), "") == 5);
  CHECK(value(*family(families, "infiniband_exporter_mad_requests_cancelled_total"), "") == 9);
  const auto* saturated = family(families, "infiniband_exporter_counters_saturated_total");
  const auto* reset = family(families, "infiniband_exporter_counters_reset_externally_total");
  const auto* cleared = family(families, "infiniband_exporter_counters_cleared_total");
  REQUIRE(saturated != nullptr);
  REQUIRE(reset != nullptr);
  REQUIRE(cleared != nullptr);
  CHECK(value(*saturated, "symbol_errors") == 4);
  CHECK(value(*reset, "transmit_data_bytes") == 6);
  CHECK(value(*cleared, "link_downed") == 8);
  // Saturation only for narrow counters, clears only for those a
  // PortCounters Set selects; every counter can be reset out of band.
  CHECK(reset->metric.size() == kCounterCount);
  std::size_t narrow = 0, clearable = 0;
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    narrow += counter_info(i).narrow_bits != 0 ? 1 : 0;
    clearable += counter_info(i).select_bit >= 0 ? 1 : 0;
  }
  CHECK(saturated->metric.size() == narrow);
  CHECK(cleared->metric.size() == clearable);
  // A counter that exists only in PortCountersExtended (64 bits) cannot.
  REQUIRE(counter_info(Counter::kUnicastTransmitPackets).narrow_bits == 0);
  CHECK(value(*saturated, std::string(counter_short_name(Counter::kUnicastTransmitPackets))) == -1);
  CHECK(value(*reset, std::string(counter_short_name(Counter::kUnicastTransmitPackets))) == 0);

  // What prometheus-cpp's serializer makes of it.
  const std::string text = prometheus::TextSerializer().Serialize(families);
  CHECK(text.find("\ninfiniband_exporter_mad_requests_total{result=\"ok\"} 120\n") !=
        std::string::npos);
  CHECK(text.find("# TYPE infiniband_exporter_counters_cleared_total counter\n") !=
        std::string::npos);
}
