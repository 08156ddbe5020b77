#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "config/text_file.h"

using namespace std::chrono_literals;

namespace {

const std::string kDataDir = IBFX_SOURCE_DIR "/test/data/config/";

// The ConfigError message for `yaml`, or "" when it parses.
std::string config_error(const std::string& yaml) {
  try {
    ibfx::parse_config_yaml(yaml, "t.yaml");
  } catch (const ibfx::ConfigError& e) {
    return e.what();
  }
  return "";
}

// Parses or throws ConfigError; anything else escaping (or a crash) fails the test.
void parse_or_config_error(const std::string& text) {
  try {
    ibfx::parse_config_yaml(text, "fuzz");
  } catch (const ibfx::ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("fuzz", 0) == 0);
  }
}

std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(byte(rng));
  return out;
}

}  // namespace

TEST_CASE("durations: the Prometheus syntax", "[config]") {
  using ibfx::parse_duration;
  CHECK(parse_duration("10s") == 10s);
  CHECK(parse_duration("250ms") == 250ms);
  CHECK(parse_duration("1h30m") == 90min);
  CHECK(parse_duration("2m") == 2min);
  CHECK(parse_duration("1d") == 24h);
  CHECK(parse_duration("1w") == 7 * 24h);
  CHECK(parse_duration("1y") == 365 * 24h);
  CHECK(parse_duration("1y2w3d4h5m6s7ms") == 365 * 24h + 14 * 24h + 3 * 24h + 4h + 5min + 6s + 7ms);
  CHECK(parse_duration("0s500ms") == 500ms);
  CHECK(parse_duration("106751991167d") == 106751991167LL * 24h);
}

TEST_CASE("durations: errors quote the text", "[config]") {
  const auto error = [](std::string_view text) -> std::string {
    try {
      ibfx::parse_duration(text);
    } catch (const ibfx::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error("") == "invalid duration \"\": empty");
  CHECK(error("-5s") == "invalid duration \"-5s\": negative durations are not allowed");
  CHECK(error("10") == "invalid duration \"10\": missing unit (ms, s, m, h, d, w or y)");
  CHECK(error("10x") ==
        "invalid duration \"10x\": unknown unit \"x\" (use ms, s, m, h, d, w or y)");
  CHECK(error("10S") ==
        "invalid duration \"10S\": unknown unit \"S\" (use ms, s, m, h, d, w or y)");
  CHECK(error("0s") == "invalid duration \"0s\": must be greater than zero");
  CHECK(error("0h0m") == "invalid duration \"0h0m\": must be greater than zero");
  CHECK(error("s") == "invalid duration \"s\": expected a number before \"s\"");
  CHECK(
      error("1.5h") ==
      "invalid duration \"1.5h\": fractions are not supported; combine units instead, e.g. 1m30s");
  CHECK(error("30m1h") ==
        "invalid duration \"30m1h\": units must go from largest to smallest, each at most once");
  CHECK(error("1s1s") ==
        "invalid duration \"1s1s\": units must go from largest to smallest, each at most once");
  CHECK(error(" 10s") == "invalid duration \" 10s\": unexpected character \" \"");
  CHECK(error("10 s") == "invalid duration \"10 s\": unexpected character \" \"");
  CHECK(error("+10s") == "invalid duration \"+10s\": unexpected character \"+\"");
  CHECK(error("99999999999999999999s") == "invalid duration \"99999999999999999999s\": too large");
  CHECK(error("300000000y") == "invalid duration \"300000000y\": too large");
  CHECK(error("106751991167d8h") == "invalid duration \"106751991167d8h\": too large");
  CHECK(error(std::string("1\0s", 3)) ==
        "invalid duration \"1\\x00s\": unexpected character \"\\x00\"");
}

TEST_CASE("durations: format_duration round-trips", "[config]") {
  CHECK(ibfx::format_duration(10s) == "10s");
  CHECK(ibfx::format_duration(90s) == "1m30s");
  CHECK(ibfx::format_duration(100ms) == "100ms");
  CHECK(ibfx::format_duration(5min) == "5m");
  CHECK(ibfx::format_duration(0ms) == "0s");
  for (const ibfx::Duration d :
       {1ms, 1001ms, ibfx::Duration(1h + 1ms), ibfx::Duration(400 * 24h)}) {
    CHECK(ibfx::parse_duration(ibfx::format_duration(d)) == d);
  }
}

TEST_CASE("config: an empty file or one with only comments gives the defaults", "[config]") {
  CHECK(ibfx::parse_config_yaml("", "t.yaml") == ibfx::Config{});
  CHECK(ibfx::parse_config_yaml("# nothing\n\n   \n", "t.yaml") == ibfx::Config{});
  CHECK(ibfx::parse_config_yaml("~\n", "t.yaml") == ibfx::Config{});
  // A section whose sub-keys are all commented out keeps its defaults.
  CHECK(ibfx::parse_config_yaml("mad:\n  # timeout: 1s\n", "t.yaml") == ibfx::Config{});
}

TEST_CASE("config: the shipped file holds every key, set to its default", "[config]") {
  const std::string path = IBFX_SOURCE_DIR "/config/ibfabric_exporter.yaml";
  CHECK(ibfx::load_config_file(path) == ibfx::Config{});

  const YAML::Node root = YAML::LoadFile(path);
  for (const std::string_view key : ibfx::config_keys()) {
    INFO("key " << key);
    YAML::Node node = root;
    std::string_view rest = key;
    for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
      node.reset(node[std::string(rest.substr(0, dot))]);
      rest.remove_prefix(dot + 1);
    }
    REQUIRE(node.IsMap());
    CHECK(node[std::string(rest)].IsScalar());
  }
}

TEST_CASE("config: every key is read", "[config]") {
  const ibfx::Config c = ibfx::load_config_file(kDataDir + "every_key.yaml");
  CHECK(c.listen_address == "127.0.0.1:19690");
  CHECK(c.web.header_timeout == 3s);
  CHECK(c.web.idle_timeout == 2min);
  CHECK(c.web.max_connections == 5000);
  CHECK(c.web.max_connections_per_client == 16);
  CHECK(c.sweep_interval == 90s);
  CHECK(c.ca == "mlx5_1");
  CHECK(c.ca_port == 2);
  CHECK(c.node_name_map_file == "/etc/infiniband-diags/node-name-map");
  CHECK(c.state_directory == "/srv/ibfx/state");
  CHECK(c.log_level == "debug");
  CHECK(c.log_format == "json");
  CHECK(c.telemetry_path == "/exporter/metrics");
  CHECK(c.mad.global_inflight == 256);
  CHECK(c.mad.per_node_inflight == 8);
  CHECK(c.mad.timeout == 250ms);
  CHECK(c.mad.retries == 5);
  CHECK(c.mad.max_mads_per_second == 20000);
  CHECK(c.discovery.interval == 1h);
  CHECK(c.discovery.max_smps == 32);
  CHECK(c.discovery.timeout == 1s);
  CHECK(c.discovery.retries == 0);
  CHECK(c.discovery.forget_after == 10min);
  CHECK(c.discovery.forget_after_discoveries == 5);
  CHECK(c.counters.clear_on_threshold);
  CHECK(c.counters.clear_threshold == 0.5);
  CHECK_FALSE(c.counters.include_hcas);
  CHECK(c.counters.include_switch_port0);
  CHECK(c.counters.probe_sm_and_local_ports);
  CHECK(c.counters.error_details);
  CHECK(c.counters.vl_transmit_wait);
  CHECK(c.counters.congestion_control);
  CHECK(c.sharding.count == 4);
  CHECK(c.sharding.index == 3);
  CHECK_FALSE(c.exporting.port_counters);
  CHECK_FALSE(c.exporting.hca_port_counters);
  CHECK_FALSE(c.exporting.error_counters);
  CHECK_FALSE(c.exporting.traffic_counters);
  CHECK(c.exporting.port_scores);
  CHECK(c.exporting.zero_error_counters);
  CHECK(c.exporting.raw_transmit_wait);
  CHECK(c.jobs.source == "slurmrestd");
  CHECK(c.jobs.url == "https://slurm.example:6820");
  CHECK(c.jobs.api_version == "v0.0.39");
  CHECK(c.jobs.token_file == "/etc/ibfx/slurm.jwt");
  CHECK(c.jobs.user_name == "ibfx");
  CHECK(c.jobs.squeue_command == "/opt/slurm/bin/squeue");
  CHECK(c.jobs.poll_interval == 30s);
  CHECK(c.jobs.timeout == 2s);
  CHECK(c.jobs.grace_period == 5min);
  CHECK(c.jobs.max_jobs == 500);
  CHECK(c.jobs.host_regex == "^(node[0-9]+)-ib");
  CHECK(c.jobs.host_map == "/etc/ibfx/hosts");
  CHECK(c.history.recent_window == 30min);
  CHECK(c.history.coarse_window == 48h);
  CHECK(c.history.coarse_step == 5min);
  CHECK(c.history.max_memory_mb == 32);
  CHECK(c.history.save_interval == 1min);
  CHECK_FALSE(c.routes.enabled);
  CHECK(c.routes.smps_per_second == 2500);
  CHECK(c.routes.reread_interval == std::chrono::minutes(2));
  CHECK(c.nodes.recover_after == 15min);
  CHECK(c.nodes.incident_share == 0.1);
  CHECK(c.nodes.incident_min_hosts == 8);
  CHECK(c.nodes.incident_window == 2min);
  CHECK(c.nodes.stale_after == 90s);
  CHECK_FALSE(c.receipts.enabled);
  CHECK(c.receipts.keep_count == 5000);
  CHECK(c.receipts.keep_age == 7 * 24h);
  CHECK(c.receipts.clean_stall_ratio == 0.05);
  CHECK(c.receipts.unknown_end_after == 30min);

  // Each value differs from the default, so a key silently ignored shows up here.
  for (const std::string_view key : ibfx::config_keys()) {
    INFO("key " << key);
    CHECK(ibfx::config_value_text(c, key) != ibfx::config_value_text(ibfx::Config{}, key));
  }
}

TEST_CASE("config: accepted spellings", "[config]") {
  const auto c = ibfx::parse_config_yaml(
      "listen_address: '[::1]:9690'\n"
      "ca: \"\"\n"
      "sweep_interval: \"30s\"\n"
      "counters: {include_hcas: False, clear_threshold: 1, include_switch_port0: TRUE}\n"
      "mad: {global_inflight: 4096, per_node_inflight: 64, retries: 10}\n"
      "discovery:\n  max_smps: 256\n",
      "t.yaml");
  CHECK(c.listen_address == "[::1]:9690");
  CHECK(c.sweep_interval == 30s);
  CHECK_FALSE(c.counters.include_hcas);
  CHECK(c.counters.include_switch_port0);
  CHECK(c.counters.clear_threshold == 1.0);
  CHECK(c.mad.global_inflight == 4096);
  CHECK(c.mad.per_node_inflight == 64);
  CHECK(c.discovery.max_smps == 256);
  CHECK(ibfx::parse_config_yaml("listen_address: \"host.example:0\"\n", "t").listen_address ==
        "host.example:0");
}

TEST_CASE("config: unknown keys are named with their line", "[config]") {
  CHECK(config_error("ca: a\nbogus: 1\n") == "t.yaml:2: bogus: unknown key");
  CHECK(config_error("mad:\n  timeout: 1s\n  bogus: 2\n") == "t.yaml:3: mad.bogus: unknown key");
  CHECK(config_error("counters:\n\n  include_hca: true\n") ==
        "t.yaml:3: counters.include_hca: unknown key");
  // Dotted names are not a second spelling of the nested keys.
  CHECK(config_error("mad.timeout: 1s\n") == "t.yaml:1: mad.timeout: unknown key");
  CHECK(config_error("mad:\n  mad:\n    timeout: 1s\n") == "t.yaml:2: mad.mad: unknown key");
  CHECK(config_error("? [a, b]\n: 1\n") == "t.yaml:1: ?: keys must be plain names");
}

TEST_CASE("config: wrong types", "[config]") {
  CHECK(config_error("ca_port: abc\n") == "t.yaml:1: ca_port: expected an integer, got \"abc\"");
  CHECK(config_error("ca_port: 1.5\n") == "t.yaml:1: ca_port: expected an integer, got \"1.5\"");
  CHECK(config_error("ca_port: \"1\"\n") ==
        "t.yaml:1: ca_port: expected an integer, got the quoted string \"1\"");
  CHECK(config_error("counters:\n  include_hcas: yes\n") ==
        "t.yaml:2: counters.include_hcas: expected true or false, got \"yes\"");
  CHECK(config_error("counters:\n  include_hcas: 'true'\n") ==
        "t.yaml:2: counters.include_hcas: expected true or false, got the quoted string \"true\"");
  CHECK(config_error("counters:\n  clear_threshold: half\n") ==
        "t.yaml:2: counters.clear_threshold: expected a number, got \"half\"");
  CHECK(config_error("counters:\n  clear_threshold: .nan\n") ==
        "t.yaml:2: counters.clear_threshold: expected a number, got \".nan\"");
  CHECK(config_error("ca: [mlx5_0, mlx5_1]\n") ==
        "t.yaml:1: ca: expected a single value, got a list");
  CHECK(config_error("sweep_interval: {a: 1}\n") ==
        "t.yaml:1: sweep_interval: expected a single value, got a mapping");
  CHECK(config_error("mad: 5\n") ==
        "t.yaml:1: mad: expected a mapping of keys, got the value \"5\"");
  CHECK(config_error("ca: x\ndiscovery:\n  - 1\n") ==
        "t.yaml:2: discovery: expected a mapping of keys, got a list");
  CHECK(config_error("log_level: info\nca_port:\nca: x\n") ==
        "t.yaml:2: ca_port: missing value (write \"\" for an empty string)");
  CHECK(config_error("mad:\n  timeout: 10\n") ==
        "t.yaml:2: mad.timeout: invalid duration \"10\": missing unit (ms, s, m, h, d, w or y)");
  CHECK(config_error("discovery:\n  interval: 0s\n") ==
        "t.yaml:2: discovery.interval: invalid duration \"0s\": must be greater than zero");
  // A value on its own line is reported where it is.
  CHECK(config_error("mad:\n  retries:\n    eleven\n") ==
        "t.yaml:3: mad.retries: expected an integer, got \"eleven\"");
}

TEST_CASE("config: out-of-range values", "[config]") {
  CHECK(config_error("ca_port: -1\n") == "t.yaml:1: ca_port: must be between 0 and 254, got -1");
  CHECK(config_error("ca_port: 255\n") == "t.yaml:1: ca_port: must be between 0 and 254, got 255");
  CHECK(config_error("mad:\n  global_inflight: 0\n") ==
        "t.yaml:2: mad.global_inflight: must be between 1 and 4096, got 0");
  CHECK(config_error("mad:\n  global_inflight: 4097\n") ==
        "t.yaml:2: mad.global_inflight: must be between 1 and 4096, got 4097");
  CHECK(config_error("mad:\n  per_node_inflight: 65\n") ==
        "t.yaml:2: mad.per_node_inflight: must be between 1 and 64, got 65");
  CHECK(config_error("mad:\n  retries: 11\n") ==
        "t.yaml:2: mad.retries: must be between 0 and 10, got 11");
  CHECK(config_error("mad:\n  max_mads_per_second: -1\n") ==
        "t.yaml:2: mad.max_mads_per_second: must be between 0 and 2147483647, got -1");
  CHECK(config_error("mad:\n  max_mads_per_second: 99999999999999999999\n") ==
        "t.yaml:2: mad.max_mads_per_second: must be between 0 and 2147483647, got "
        "99999999999999999999");
  CHECK(config_error("discovery:\n  max_smps: 0\n") ==
        "t.yaml:2: discovery.max_smps: must be between 1 and 256, got 0");
  CHECK(config_error("discovery:\n  max_smps: 257\n") ==
        "t.yaml:2: discovery.max_smps: must be between 1 and 256, got 257");
  CHECK(config_error("discovery:\n  retries: -1\n") ==
        "t.yaml:2: discovery.retries: must be between 0 and 10, got -1");
  CHECK(config_error("discovery:\n  forget_after: 0s\n") ==
        "t.yaml:2: discovery.forget_after: invalid duration \"0s\": must be greater than zero");
  CHECK(config_error("discovery:\n  forget_after_discoveries: 0\n") ==
        "t.yaml:2: discovery.forget_after_discoveries: must be between 1 and 1000, got 0");
  CHECK(config_error("counters:\n  clear_threshold: 0\n") ==
        "t.yaml:2: counters.clear_threshold: must be in (0, 1], got 0");
  CHECK(config_error("counters:\n  clear_threshold: 1.01\n") ==
        "t.yaml:2: counters.clear_threshold: must be in (0, 1], got 1.01");
  CHECK(config_error("web:\n  header_timeout: 50ms\n") ==
        "t.yaml:2: web.header_timeout: must be between 100ms and 5m, got 50ms");
  CHECK(config_error("web:\n  header_timeout: 6m\n") ==
        "t.yaml:2: web.header_timeout: must be between 100ms and 5m, got 6m");
  CHECK(config_error("web:\n  idle_timeout: 2h\n") ==
        "t.yaml:2: web.idle_timeout: must be between 100ms and 1h, got 2h");
  CHECK(config_error("web:\n  max_connections: -1\n") ==
        "t.yaml:2: web.max_connections: must be between 0 and 1048576, got -1");
  CHECK(config_error("web:\n  max_connections_per_client: 1048577\n") ==
        "t.yaml:2: web.max_connections_per_client: must be between 0 and 1048576, got 1048577");
  CHECK(config_error("log_level: verbose\n") ==
        "t.yaml:1: log_level: expected one of debug, info, warn, error, got \"verbose\"");
  const std::string address_error =
      "t.yaml:1: listen_address: expected [host]:port such as \":9690\", \"127.0.0.1:9690\" or "
      "\"[::1]:9690\", got ";
  CHECK(config_error("listen_address: \"9690\"\n") == address_error + "\"9690\"");
  CHECK(config_error("listen_address: \"host:99999\"\n") == address_error + "\"host:99999\"");
  CHECK(config_error("listen_address: \"::1:9690\"\n") == address_error + "\"::1:9690\"");
  CHECK(config_error("listen_address: \"host:\"\n") == address_error + "\"host:\"");
}

TEST_CASE("config: per_node_inflight may not exceed global_inflight", "[config]") {
  CHECK(config_error("mad:\n  global_inflight: 8\n  per_node_inflight: 16\n") ==
        "t.yaml:3: mad.per_node_inflight: per_node_inflight (16) must not exceed "
        "global_inflight (8)");
  // Only global_inflight set: it is the line to blame.
  CHECK(config_error("mad:\n  global_inflight: 2\n") ==
        "t.yaml:2: mad.global_inflight: per_node_inflight (4) must not exceed global_inflight (2)");
  CHECK(config_error("mad:\n  global_inflight: 16\n  per_node_inflight: 16\n").empty());
}

TEST_CASE("config: duplicate keys", "[config]") {
  CHECK(config_error("ca: a\nlog_level: info\nca: b\n") ==
        "t.yaml:3: ca: duplicate key (first set on line 1)");
  CHECK(config_error("mad:\n  retries: 1\nmad:\n  retries: 2\n") ==
        "t.yaml:3: mad: duplicate key (first set on line 1)");
}

TEST_CASE("config: malformed YAML and bad structure", "[config]") {
  CHECK(config_error("mad:\n  timeout: [1s\n") ==
        "t.yaml:3: invalid YAML: end of sequence flow not found");
  CHECK(config_error("ca: a: b\n") == "t.yaml:1: invalid YAML: illegal map value");
  CHECK(config_error("mad:\n  timeout: 1s\n retries: 2\n") ==
        "t.yaml:3: invalid YAML: end of map not found");
  CHECK(config_error("ca: x\n\tlog_level: info\n") ==
        "t.yaml:2: invalid YAML: illegal tab when looking for indentation");
  CHECK(config_error("ca: *nope\n") ==
        "t.yaml:1: invalid YAML: the referenced anchor is not defined");
  CHECK(config_error("- a\n- b\n") ==
        "t.yaml:1: (top level): expected a mapping of keys to values, got a list");
  CHECK(config_error("hello\n") ==
        "t.yaml:1: (top level): expected a mapping of keys to values, got the value \"hello\"");
  CHECK(config_error("ca: a\n---\nca: b\n") ==
        "t.yaml:3: (top level): only one YAML document is allowed");
}

TEST_CASE("config: unreadable files", "[config]") {
  CHECK_THROWS_WITH(ibfx::load_config_file("/nonexistent/ibfx.yaml"),
                    "/nonexistent/ibfx.yaml: cannot read: No such file or directory");
  CHECK_THROWS_WITH(ibfx::load_config_file(kDataDir), kDataDir + ": cannot read: Is a directory");
  CHECK_THROWS_WITH(ibfx::load_config_file("/dev/zero"),
                    "/dev/zero: cannot read: larger than 1048576 bytes");
}

TEST_CASE("config: garbage never crashes", "[config]") {
  CHECK_THROWS_AS(ibfx::parse_config_yaml(random_bytes(1 << 20, 1), "fuzz"), ibfx::ConfigError);
  CHECK_THROWS_AS(ibfx::parse_config_yaml(std::string(1 << 20, '['), "fuzz"), ibfx::ConfigError);
  CHECK_THROWS_AS(ibfx::parse_config_yaml(std::string(1 << 20, '{'), "fuzz"), ibfx::ConfigError);
  std::string nested;  // "- - - - ...": block sequences nested 500k deep
  for (int i = 0; i < (1 << 19); ++i) nested += "- ";
  CHECK_THROWS_AS(ibfx::parse_config_yaml(nested, "fuzz"), ibfx::ConfigError);
  CHECK(ibfx::parse_config_yaml("ca: " + std::string(1 << 20, 'x') + "\n", "big").ca.size() ==
        1 << 20);

  // Messages stay printable whatever the input was.
  try {
    ibfx::parse_config_yaml(std::string("ca: \"\\\x01\"\n", 9), "fuzz");
    FAIL("expected an error");
  } catch (const ibfx::ConfigError& e) {
    for (const char c : std::string(e.what())) CHECK((c >= 0x20 && c < 0x7f));
  }

  // Every truncation of the shipped file, and random byte flips of it.
  const std::string text =
      ibfx::read_text_file(IBFX_SOURCE_DIR "/config/ibfabric_exporter.yaml", 1 << 20);
  for (std::size_t n = 0; n <= text.size(); n += 7) parse_or_config_error(text.substr(0, n));
  std::mt19937 rng(42);
  for (int round = 0; round < 300; ++round) {
    std::string mutated = text;
    for (int flips = 0; flips < 4; ++flips) {
      mutated[rng() % mutated.size()] = static_cast<char>(rng() % 256);
    }
    parse_or_config_error(mutated);
  }
}

TEST_CASE("config: a stray comma is an error and not a hang (yaml-cpp 0.7 LoadAll)", "[config]") {
  // Found by fuzz/config_fuzz: yaml-cpp 0.7's LoadAll never returns on ",".
  for (const char* text : {",", " , a: 0", "sweep_interval: 10s\n,\n"}) {
    INFO(text);
    CHECK_THROWS_AS(ibfx::parse_config_yaml(text, "stray.yaml"), ibfx::ConfigError);
  }
}

TEST_CASE("config: state_directory is absolute or empty", "[config]") {
  CHECK(ibfx::parse_config_yaml("state_directory: /var/lib/x/\n", "s.yaml").state_directory ==
        "/var/lib/x");
  CHECK(ibfx::parse_config_yaml("state_directory: \"\"\n", "s.yaml").state_directory.empty());
  try {
    (void)ibfx::parse_config_yaml("state_directory: var/lib\n", "s.yaml");
    FAIL("accepted a relative state directory");
  } catch (const ibfx::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("s.yaml:1: state_directory: expected an absolute "
                                         "directory"));
  }
}

TEST_CASE("config: the jobs section's values and the keys a source needs", "[config]") {
  auto config_error = [](const std::string& text) {
    try {
      ibfx::parse_config_yaml(text, "j.yaml");
    } catch (const ibfx::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_FALSE(ibfx::Config{}.jobs.enabled());
  CHECK(config_error("jobs:\n  source: pbs\n") ==
        "j.yaml:2: jobs.source: expected none, slurmrestd or squeue, got \"pbs\"");
  CHECK(config_error("jobs:\n  source: slurmrestd\n") ==
        "j.yaml:2: jobs.url: source slurmrestd needs a url");
  CHECK(config_error("jobs:\n  url: unix://relative\n") ==
        "j.yaml:2: jobs.url: expected unix:///absolute/path, got \"unix://relative\"");
  CHECK(config_error("jobs:\n  url: ftp://h:1\n").find("expected unix:///path, http://host:port") !=
        std::string::npos);
  CHECK(config_error("jobs:\n  url: http://h\n") ==
        "j.yaml:2: jobs.url: expected http://host:port (no path), got \"http://h\"");
  CHECK(config_error("jobs:\n  url: http://h:70000\n").find("between 1 and 65535") !=
        std::string::npos);
  CHECK(config_error("jobs:\n  source: slurmrestd\n  url: http://h:6820\n") ==
        "j.yaml:3: jobs.token_file: an http(s) url needs token_file and user_name "
        "(slurmrestd's rest_auth/jwt)");
  CHECK(config_error("jobs:\n  api_version: ../x\n").find("expected a version") !=
        std::string::npos);
  CHECK(config_error("jobs:\n  user_name: \"a b\"\n").find("printable ASCII") != std::string::npos);
  CHECK(config_error("jobs:\n  host_regex: \"(\"\n").find("invalid regular expression") !=
        std::string::npos);
  CHECK(config_error("jobs:\n  host_regex: \"^x\"\n").find("needs a capture group") !=
        std::string::npos);
  CHECK(config_error("jobs:\n  poll_interval: 100ms\n").find("between 1s and 1h") !=
        std::string::npos);
  CHECK(config_error("jobs:\n  max_jobs: 0\n").find("between 1 and 100000") != std::string::npos);
  CHECK(config_error("jobs:\n  squeue_command: squeue\n").find("absolute path") !=
        std::string::npos);
  const ibfx::Config ok = ibfx::parse_config_yaml(
      "jobs:\n  source: slurmrestd\n  url: unix:///run/slurmrestd.sock\n", "j.yaml");
  CHECK(ok.jobs.enabled());
  CHECK(ok.jobs.url == "unix:///run/slurmrestd.sock");
}

TEST_CASE("config: the history section's values and their ranges", "[config]") {
  auto config_error = [](const std::string& text) {
    try {
      ibfx::parse_config_yaml(text, "h.yaml");
    } catch (const ibfx::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const ibfx::Config defaults;
  CHECK(defaults.history.recent_window == std::chrono::hours(1));
  CHECK(defaults.history.coarse_window == std::chrono::hours(24));
  CHECK(defaults.history.coarse_step == std::chrono::minutes(1));
  CHECK(defaults.history.max_memory_mb == 64);
  CHECK(config_error("history:\n  recent_window: 2d\n") ==
        "h.yaml:2: history.recent_window: must be between 1m and 1d, got 2d");
  CHECK(config_error("history:\n  coarse_step: 1s\n").find("between 10s and 1h") !=
        std::string::npos);
  CHECK(config_error("history:\n  max_memory_mb: 0\n") ==
        "h.yaml:2: history.max_memory_mb: must be between 1 and 4096, got 0");
  CHECK(config_error("history:\n  window: 1h\n") == "h.yaml:2: history.window: unknown key");
  const ibfx::Config c = ibfx::parse_config_yaml(
      "history:\n  recent_window: 30m\n  coarse_window: 7d\n  coarse_step: 5m\n"
      "  max_memory_mb: 16\n  save_interval: 1m\n",
      "h.yaml");
  CHECK(c.history.recent_window == std::chrono::minutes(30));
  CHECK(c.history.coarse_window == std::chrono::hours(24 * 7));
  CHECK(c.history.coarse_step == std::chrono::minutes(5));
  CHECK(c.history.max_memory_mb == 16);
  CHECK(c.history.save_interval == std::chrono::minutes(1));
}

TEST_CASE("config: the routes section's values and their ranges", "[config]") {
  const ibfx::Config defaults;
  CHECK(defaults.routes.enabled);
  // A 98k-port fabric's ~450k SMPs within 60 s.
  CHECK(defaults.routes.smps_per_second * 60 >= 450000);
  CHECK(config_error("routes:\n  smps_per_second: 0\n") ==
        "t.yaml:2: routes.smps_per_second: must be between 10 and 1000000, got 0");
  CHECK(config_error("routes:\n  smps_per_second: fast\n") ==
        "t.yaml:2: routes.smps_per_second: expected an integer, got \"fast\"");
  CHECK(config_error("routes:\n  enabled: yes\n") ==
        "t.yaml:2: routes.enabled: expected true or false, got \"yes\"");
  CHECK(config_error("routes:\n  budget: 5\n") == "t.yaml:2: routes.budget: unknown key");
  const ibfx::Config c =
      ibfx::parse_config_yaml("routes:\n  enabled: false\n  smps_per_second: 50\n", "r.yaml");
  CHECK_FALSE(c.routes.enabled);
  CHECK(c.routes.smps_per_second == 50);
  ibfx::Config flags;
  ibfx::set_config_value(flags, "routes.smps_per_second", "20000");
  CHECK(flags.routes.smps_per_second == 20000);
}

TEST_CASE("restart_only_setting_of names the entry a key is or falls under", "[config]") {
  CHECK(ibfx::restart_only_setting_of("history") == "history");
  CHECK(ibfx::restart_only_setting_of("history.coarse_step") == "history");
  CHECK(ibfx::restart_only_setting_of("ca_port") == "ca_port");
  CHECK(ibfx::restart_only_setting_of("ca").size() == 2);
  CHECK(ibfx::restart_only_setting_of("historyx").empty());
  CHECK(ibfx::restart_only_setting_of("sweep.interval").empty());
}

TEST_CASE("keep_restart_only keeps and names every setting a reload cannot apply", "[config]") {
  const ibfx::Config running;
  ibfx::Config next;
  next.listen_address = ":9999";
  next.telemetry_path = "/other";
  next.web.max_connections = 7;
  next.ca = "mlx5_3";
  next.ca_port = 2;
  next.state_directory = "/tmp/elsewhere";
  next.history.recent_window = std::chrono::hours(2);
  next.sweep_interval = std::chrono::seconds(3);  // a reload applies this one
  const std::vector<std::string> differed = ibfx::keep_restart_only(running, next);
  std::vector<std::string> all;
  for (std::string_view s : ibfx::restart_only_settings()) all.emplace_back(s);
  CHECK(differed == all);  // every one, in the list's order
  ibfx::Config expected = running;
  expected.sweep_interval = std::chrono::seconds(3);
  CHECK(next == expected);  // all kept but the applied one
  CHECK(ibfx::keep_restart_only(running, next).empty());
  // Each entry names a key or a section of the configuration file.
  const std::vector<std::string_view> keys = ibfx::config_keys();
  for (std::string_view s : ibfx::restart_only_settings()) {
    INFO(s);
    CHECK(std::any_of(keys.begin(), keys.end(),
                      [s](std::string_view k) { return ibfx::restart_only_setting_of(k) == s; }));
  }
}
