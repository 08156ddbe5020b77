// ConfigYaml (test/support/config_yaml.h): what the tests write is what the
// config parser reads.
#include "test/support/config_yaml.h"

#include <catch2/catch.hpp>

#include "config/config.h"

using ibfx::test::ConfigYaml;

TEST_CASE("ConfigYaml nests dotted keys into the sections the parser reads", "[config_yaml]") {
  const std::string yaml = ConfigYaml()
                               .sweep_interval("1s")
                               .mad("50ms", 3)
                               .set("mad.max_mads_per_second", "50")
                               .raw_transmit_wait()
                               .set("discovery.interval", "6s")
                               .str();
  CHECK(yaml ==
        "sweep_interval: 1s\n"
        "mad:\n  timeout: 50ms\n  retries: 3\n  max_mads_per_second: 50\n"
        "export:\n  raw_transmit_wait: true\n"
        "discovery:\n  interval: 6s\n");
  const ibfx::Config c = ibfx::parse_config_yaml(yaml, "test.yaml");
  CHECK(c.sweep_interval == std::chrono::seconds(1));
  CHECK(c.mad.timeout == std::chrono::milliseconds(50));
  CHECK(c.mad.retries == 3);
  CHECK(c.mad.max_mads_per_second == 50);
  CHECK(c.exporting.raw_transmit_wait);
  CHECK(c.discovery.interval == std::chrono::seconds(6));
}

TEST_CASE("ConfigYaml keeps a key's place and its last value, and a section is not a value",
          "[config_yaml]") {
  ConfigYaml y;
  y.sweep_interval("1s").mad("50ms", 1).sweep_interval("2s");
  CHECK(y.str() == "sweep_interval: 2s\nmad:\n  timeout: 50ms\n  retries: 1\n");
  CHECK(ConfigYaml().str().empty());
  CHECK_THROWS_AS(ConfigYaml(y).set("mad", "1"), std::logic_error);
  // A bad value reaches the parser as written: its error is the test's to see.
  CHECK_THROWS_AS(ibfx::parse_config_yaml(ConfigYaml().set("mad.retries", "lots").str(), "t"),
                  ibfx::ConfigError);
}
