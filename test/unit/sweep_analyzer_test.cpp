#include "analysis/sweep_analyzer.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "test/support/fabric_builder.h"

namespace {

using SystemClock = std::chrono::system_clock;
using Totals = std::array<std::uint64_t, ibfx::kCounterCount>;

std::uint64_t& at(Totals& t, ibfx::Counter c) { return t[static_cast<std::size_t>(c)]; }

}  // namespace

TEST_CASE("SweepAnalyzer: deltas between sweeps, cumulative histograms, topology per fabric",
          "[sweep_analyzer]") {
  const auto rf = ibfx::test::rail_fabric(
      {.rails = 1, .leaves_per_rail = 1, .hosts_per_leaf = 2, .spines_per_rail = 1, .cores = 0});
  auto fabric = std::make_shared<const ibfx::Fabric>(rf.fabric);
  // Every linked port, its totals in `totals`.
  std::vector<Totals> totals;
  std::vector<ibfx::SweepPortTotals> ports;
  for (std::uint32_t i = 0; i < fabric->nodes.size(); ++i) {
    for (std::uint32_t j = 0; j < fabric->nodes[i].ports.size(); ++j) {
      if (fabric->nodes[i].ports[j].linked()) ports.push_back({i, j, -1, true, true, nullptr});
    }
  }
  totals.resize(ports.size());
  for (std::size_t k = 0; k < ports.size(); ++k) ports[k].totals = &totals[k];

  ibfx::SweepAnalyzer analyzer;
  const ibfx::AnalysisConfig config;
  const auto t0 = SystemClock::time_point(std::chrono::seconds(1'000'000));
  ibfx::SweepAnalysis first = analyzer.analyze(fabric, {}, ports, t0, config);
  REQUIRE(first.topology);
  CHECK(first.samples.empty());  // one sweep is not an interval
  CHECK(first.result.ports.empty());
  CHECK(first.histograms.empty());

  // 10 s later: port 0 stalled a quarter of the time (IBA unit on 4x HDR:
  // 1.28 ns per count) and sending at half of 25e9 bytes/s.
  at(totals[0], ibfx::Counter::kTransmitWait) = static_cast<std::uint64_t>(2.5 / 1.28e-9);
  at(totals[0], ibfx::Counter::kTransmitDataBytes) = static_cast<std::uint64_t>(12.5e9 * 10 / 4);
  ports[1].read = false;  // not read this sweep: no sample
  const ibfx::SweepAnalysis second =
      analyzer.analyze(fabric, {}, ports, t0 + std::chrono::seconds(10), config);
  CHECK(second.topology == first.topology);  // same fabric, same classification
  CHECK(second.interval_seconds == Approx(10));
  REQUIRE(second.samples.size() == ports.size() - 1);
  REQUIRE(second.result.ports.size() == ports.size() - 1);
  CHECK(second.result.ports[0].stall == Approx(0.25).epsilon(1e-6));
  CHECK(second.result.ports[0].utilization == Approx(0.5));
  std::uint64_t observed = 0;
  for (const auto& [key, h] : second.histograms) observed += h.count;
  CHECK(observed == ports.size() - 1);
  std::uint64_t u_observed = 0;
  for (const auto& [key, h] : second.utilization_histograms) u_observed += h.count;
  CHECK(u_observed == ports.size() - 1);

  // The histograms accumulate; a new fabric (a discovery) is classified anew,
  // and so is the same one after reclassify().
  ports[1].read = true;
  const ibfx::SweepAnalysis third =
      analyzer.analyze(fabric, {}, ports, t0 + std::chrono::seconds(20), config);
  observed = 0;
  for (const auto& [key, h] : third.histograms) observed += h.count;
  CHECK(observed == 2 * ports.size() - 1);
  CHECK(third.topology == first.topology);
  analyzer.reclassify();
  const ibfx::SweepAnalysis fourth =
      analyzer.analyze(fabric, {}, ports, t0 + std::chrono::seconds(30), config);
  CHECK(fourth.topology != first.topology);
  auto copy = std::make_shared<const ibfx::Fabric>(rf.fabric);
  CHECK(analyzer.analyze(copy, {}, ports, t0 + std::chrono::seconds(40), config).topology !=
        fourth.topology);
}
