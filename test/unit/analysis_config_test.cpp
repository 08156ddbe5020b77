#include "analysis/analysis_config.h"

#include <catch2/catch.hpp>
#include <string>

#include "config/text_file.h"

// The shipped file lists the analysis sections too, each key at its default:
// deleting a line of it must change nothing (config_test checks the core keys).
TEST_CASE("analysis config: the shipped file sets topology scores and links to their defaults",
          "[config]") {
  const std::string path = IBFX_SOURCE_DIR "/config/ibfabric_exporter.yaml";
  const ibfx::AnalysisConfig shipped =
      ibfx::parse_analysis_config(ibfx::read_text_file(path, 1 << 20), path);
  const ibfx::AnalysisConfig defaults;

  const ibfx::TopologyConfig& t = shipped.topology;
  CHECK(t.rail_regex == defaults.topology.rail_regex);
  CHECK(t.rail_by_guid.empty());
  CHECK(t.rail_by_name.empty());
  CHECK(t.tier_by_guid.empty());
  CHECK(t.tier_by_name.empty());

  const ibfx::ScoreConfig& s = shipped.scores;
  const ibfx::ScoreConfig& d = defaults.scores;
  CHECK(s.xmit_wait.multiplier == d.xmit_wait.multiplier);
  CHECK(s.xmit_wait.global_seconds == d.xmit_wait.global_seconds);
  CHECK(s.xmit_wait.per_speed_seconds.empty());
  CHECK(s.xmit_wait.by_device_id.empty());
  CHECK(s.xmit_wait.by_guid.empty());
  CHECK(s.congestion.stall_threshold == d.congestion.stall_threshold);
  CHECK(s.congestion.saturation_threshold == d.congestion.saturation_threshold);
  CHECK(s.congestion.imbalance_threshold == d.congestion.imbalance_threshold);
  CHECK(s.congestion.top_k == d.congestion.top_k);
  CHECK(s.congestion.evidence_floor == d.congestion.evidence_floor);
  CHECK(s.congestion.evidence_margin == d.congestion.evidence_margin);
  CHECK(s.congestion.hold_fraction == d.congestion.hold_fraction);
  CHECK(s.mad_floor == d.mad_floor);
  CHECK(s.hot_threshold == d.hot_threshold);
  CHECK(s.top_k == d.top_k);
  CHECK(s.tail_floor == d.tail_floor);

  CHECK(shipped.links == defaults.links);
}
