#include "daemon/engine_totals.h"

#include <cstdint>
#include <string>
#include <utility>

#include "exposition/counter_families.h"
#include "fabric/counters.h"

namespace ibfx {

namespace {

prometheus::MetricFamily counter_family(std::string name, std::string help) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = prometheus::MetricType::Counter;
  return f;
}

void add(prometheus::MetricFamily& f, std::uint64_t value, const char* label = nullptr,
         std::string label_value = {}) {
  prometheus::ClientMetric m;
  if (label != nullptr) m.label.push_back({label, std::move(label_value)});
  m.counter.value = static_cast<double>(value);
  f.metric.push_back(std::move(m));
}

// A family of one unlabelled counter.
prometheus::MetricFamily single_counter(std::string name, std::string help, std::uint64_t value) {
  prometheus::MetricFamily f = counter_family(std::move(name), std::move(help));
  add(f, value);
  return f;
}

}  // namespace

void EngineTotals::set(const MadEngineStats& mad, const AccumulatorStats& accumulator) {
  std::lock_guard lock(mu_);
  mad_ = mad;
  accumulator_ = accumulator;
}

std::vector<prometheus::MetricFamily> EngineTotals::Collect() const {
  MadEngineStats mad;
  AccumulatorStats acc;
  {
    std::lock_guard lock(mu_);
    mad = mad_;
    acc = accumulator_;
  }
  std::vector<prometheus::MetricFamily> out;
  out.reserve(8);

  auto requests = counter_family(
      "infiniband_exporter_mad_requests_total",
      "MAD requests completed (PMA reads and the sweep's NodeInfo LID checks), by result (ok, "
      "timeout after all retries, error status or send failure).");
  add(requests, mad.ok, "result", "ok");
  add(requests, mad.timeouts, "result", "timeout");
  add(requests, mad.errors, "result", "error");
  out.push_back(std::move(requests));

  out.push_back(single_counter(
      "infiniband_exporter_optional_probes_unanswered_total",
      "Optional PMA probes (e.g. PortSamplesControl, which ibsim lacks) that got no usable "
      "answer; not counted as MAD failures.",
      mad.optional_unanswered));
  out.push_back(single_counter("infiniband_exporter_mad_retries_total",
                               "MAD attempts repeated after a timeout.", mad.retries));
  out.push_back(
      single_counter("infiniband_exporter_mad_late_responses_total",
                     "Responses that matched no outstanding request (arrived after a timeout).",
                     mad.late_or_unknown));
  out.push_back(single_counter(
      "infiniband_exporter_mad_requests_cancelled_total",
      "MAD requests a sweep's budget ended before they were answered (not sent, or in flight): "
      "not asked, not counted as timeouts.",
      mad.cancelled));

  auto saturated =
      counter_family("infiniband_exporter_counters_saturated_total",
                     "Times a narrow device counter was seen at its maximum, by counter.");
  auto reset = counter_family(
      "infiniband_exporter_counters_reset_externally_total",
      "Times a device counter went down without this daemon clearing it (cleared out of band), "
      "by counter.");
  auto cleared =
      counter_family("infiniband_exporter_counters_cleared_total",
                     "Counters cleared by this daemon at the clear threshold, by counter.");
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    const auto c = static_cast<Counter>(i);
    const std::string name(counter_short_name(c));
    // Only a narrow counter can saturate, only the PortCounters ones
    // (CounterSelect bit) can be cleared.
    if (counter_info(c).narrow_bits != 0) add(saturated, acc.saturations[i], "counter", name);
    add(reset, acc.external_clears[i], "counter", name);
    if (counter_info(c).select_bit >= 0) add(cleared, acc.clears[i], "counter", name);
  }
  out.push_back(std::move(saturated));
  out.push_back(std::move(reset));
  out.push_back(std::move(cleared));
  return out;
}

}  // namespace ibfx
