#include "analysis/link_condition.h"

#include <catch2/catch.hpp>

#include "analysis/analysis_config.h"
#include "config/config_error.h"

TEST_CASE("LinkCondition: names, order of severity", "[links]") {
  CHECK(ibfx::link_condition_name(ibfx::LinkCondition::kBerError) == "ber_error");
  CHECK(ibfx::link_condition_name(ibfx::LinkCondition::kDown) == "down");
  CHECK(ibfx::parse_link_condition("flapping") == ibfx::LinkCondition::kFlapping);
  CHECK_FALSE(ibfx::parse_link_condition("broken").has_value());
  CHECK(ibfx::worst(ibfx::LinkCondition::kDegraded, ibfx::LinkCondition::kDown) ==
        ibfx::LinkCondition::kDown);
  CHECK(ibfx::LinkCondition::kBerError > ibfx::LinkCondition::kLinkErrors);
  CHECK(ibfx::LinkCondition::kLinkErrors > ibfx::LinkCondition::kBerWarning);
}

TEST_CASE("LinkHealthConfig: the links: section, defaults and errors", "[links][config]") {
  const ibfx::AnalysisConfig defaults = ibfx::parse_analysis_config("sweep_interval: 10s\n", "t");
  CHECK(defaults.links == ibfx::LinkHealthConfig{});
  CHECK(defaults.links.ber_error_short == 1e-12);
  CHECK(defaults.links.long_window_seconds == 720);
  const ibfx::AnalysisConfig c = ibfx::parse_analysis_config(
      "links:\n  ber_error_short: 1e-11\n  min_errors: 5\n  flapping_downs: 3\n", "t");
  CHECK(c.links.ber_error_short == 1e-11);
  CHECK(c.links.min_errors == 5);
  CHECK(c.links.flapping_downs == 3);
  CHECK_THROWS_WITH(ibfx::parse_analysis_config("links:\n  nope: 1\n", "t"),
                    Catch::Contains("links.nope") && Catch::Contains("unknown key"));
  CHECK_THROWS_AS(ibfx::parse_analysis_config("links:\n  ber_clear: 1e-13\n", "t"),
                  ibfx::ConfigError);
}
