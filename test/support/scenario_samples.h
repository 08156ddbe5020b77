// The analysis's input from a scenario run without a simulator: the driver's
// counter totals of a fabric's linked ports at two instants, as the samples
// of that interval (what the sweeper and the accumulator hand the analysis).
// Shared by the offline congestion tests (congestion_scenarios_test,
// congestion_transitions_test).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analysis/port_score.h"
#include "fabric/fabric.h"
#include "test/scenario/scenario.h"

namespace ibfx::test {

// (node index, port index) -> the port's totals.
using ScenarioTotals = std::map<std::pair<std::size_t, std::size_t>, PortTotals>;

// Node `n`'s linked ports, read from the driver now.
inline void read_node_totals(const ScenarioDriver& driver, const ibfx::Fabric& fabric,
                             std::size_t n, ScenarioTotals& out) {
  const auto& node = fabric.nodes[n];
  for (std::size_t j = 0; j < node.ports.size(); ++j) {
    if (node.ports[j].linked()) out[{n, j}] = driver.totals(node.description, node.ports[j].number);
  }
}

// Every node's linked ports, read from the driver now.
inline ScenarioTotals read_totals(const ScenarioDriver& driver, const ibfx::Fabric& fabric) {
  ScenarioTotals out;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) read_node_totals(driver, fabric, n, out);
  return out;
}

// The samples of an interval of `seconds` between two readings of the same
// ports.
inline std::vector<PortSample> samples_between(const ScenarioTotals& before,
                                               const ScenarioTotals& after, double seconds) {
  std::vector<PortSample> samples;
  samples.reserve(after.size());
  for (const auto& [key, t1] : after) {
    const PortTotals& t0 = before.at(key);
    PortSample s;
    s.node = static_cast<std::int32_t>(key.first);
    s.port_index = static_cast<std::uint32_t>(key.second);
    s.xmit_wait_ticks = t1.xmit_wait - t0.xmit_wait;
    s.xmit_data_words = t1.xmit_words - t0.xmit_words;
    s.error_count = t1.symbol_errors - t0.symbol_errors;
    s.interval_seconds = seconds;
    samples.push_back(s);
  }
  return samples;
}

}  // namespace ibfx::test
