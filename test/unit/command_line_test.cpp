#include "config/command_line.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/config.h"

using namespace std::chrono_literals;

namespace {

const std::string kEveryKey = IBFX_SOURCE_DIR "/test/data/config/every_key.yaml";

ibfx::CommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ibfabric_exporter");
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ibfx::parse_command_line(static_cast<int>(argv.size()), argv.data());
}

std::string command_line_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const ibfx::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("command line: no flags gives the defaults", "[command_line]") {
  const ibfx::CommandLine cl = parse({});
  CHECK(cl.config == ibfx::Config{});
  CHECK(cl.config_file.empty());
  CHECK_FALSE(cl.once);
  CHECK_FALSE(cl.check_config);
  CHECK_FALSE(cl.show_version);
  CHECK_FALSE(cl.show_help);
  CHECK(ibfx::parse_command_line(0, nullptr).config == ibfx::Config{});
}

TEST_CASE("command line: every flag, in both forms", "[command_line]") {
  bool with_equals = true;
  const auto flag = [&](const std::string& name, const std::string& value) {
    return with_equals ? std::vector<std::string>{name + "=" + value}
                       : std::vector<std::string>{name, value};
  };
  for (const bool equals : {true, false}) {
    with_equals = equals;
    std::vector<std::string> args;
    for (const auto& part :
         {flag("--web.listen-address", "127.0.0.1:9100"), flag("--sweep.interval", "1m"),
          flag("--ib.ca", "mlx5_2"), flag("--ib.ca-port", "2"),
          flag("--ib.node-name-map", "/tmp/map"), flag("--log.level", "warn"),
          flag("--log.format", "json"), flag("--web.telemetry-path", "/x/metrics"),
          flag("--web.header-timeout", "2s"), flag("--web.idle-timeout", "1m"),
          flag("--web.max-connections", "100"), flag("--web.max-connections-per-client", "4"),
          flag("--state.directory", "/srv/state")}) {
      args.insert(args.end(), part.begin(), part.end());
    }
    args.insert(args.end(), {"--once", "--check-config"});
    const ibfx::CommandLine cl = parse(args);
    CHECK(cl.config.listen_address == "127.0.0.1:9100");
    CHECK(cl.config.sweep_interval == 1min);
    CHECK(cl.config.ca == "mlx5_2");
    CHECK(cl.config.ca_port == 2);
    CHECK(cl.config.node_name_map_file == "/tmp/map");
    CHECK(cl.config.log_level == "warn");
    CHECK(cl.config.log_format == "json");
    CHECK(cl.config.telemetry_path == "/x/metrics");
    CHECK(cl.config.web.header_timeout == 2s);
    CHECK(cl.config.web.idle_timeout == 1min);
    CHECK(cl.config.web.max_connections == 100);
    CHECK(cl.config.web.max_connections_per_client == 4);
    CHECK(cl.config.state_directory == "/srv/state");
    CHECK(cl.once);
    CHECK(cl.check_config);
  }
  CHECK(parse({"--version"}).show_version);
  CHECK(parse({"--help"}).show_help);
  CHECK(parse({"-h"}).show_help);
  CHECK(parse({"--ca="}).config.ca.empty());  // explicitly "first active HCA"
}

TEST_CASE("command line: the old spellings of the fabric flags still work", "[command_line]") {
  const ibfx::CommandLine cl = parse({"--ca=mlx5_3", "--ca-port", "2", "--node-name-map=/m"});
  CHECK(cl.config.ca == "mlx5_3");
  CHECK(cl.config.ca_port == 2);
  CHECK(cl.config.node_name_map_file == "/m");
  // Both spellings of one flag are the flag given twice.
  CHECK(command_line_error({"--ca=a", "--ib.ca=b"}) == "--ib.ca: given more than once");
  CHECK(command_line_error({"--ib.ca-port=x"}) == "--ib.ca-port: expected an integer, got \"x\"");
  // Not advertised: --help shows one spelling.
  CHECK(ibfx::usage_text().find("--ca=") == std::string::npos);
}

TEST_CASE("command line: an absurd sweep interval or telemetry path is refused", "[command_line]") {
  CHECK(command_line_error({"--sweep.interval=1ms"}) ==
        "--sweep.interval: must be at least 100ms (every sweep reads every port of the fabric), "
        "got 1ms");
  CHECK(parse({"--sweep.interval=100ms"}).config.sweep_interval == 100ms);
  for (const char* path : {"metrics", "/", "/-/ready", "/a b", "/m?x", ""}) {
    INFO(path);
    CHECK(command_line_error({std::string("--web.telemetry-path=") + path})
              .rfind("--web.telemetry-path: expected an absolute path", 0) == 0);
  }
}

TEST_CASE("command line: flags override the config file wherever they appear", "[command_line]") {
  for (const bool file_first : {true, false}) {
    std::vector<std::string> args = {"--ca", "mlx5_9", "--sweep.interval=5s"};
    args.insert(file_first ? args.begin() : args.end(), "--config.file=" + kEveryKey);
    const ibfx::CommandLine cl = parse(args);
    CHECK(cl.config_file == kEveryKey);
    CHECK(cl.config.ca == "mlx5_9");        // flag wins
    CHECK(cl.config.sweep_interval == 5s);  // flag wins
    CHECK(cl.config.ca_port == 2);          // from the file
    CHECK(cl.config.mad.global_inflight == 256);
    CHECK(cl.config.log_level == "debug");
  }
  CHECK(parse({"--config.file", kEveryKey}).config == ibfx::load_config_file(kEveryKey));
}

TEST_CASE("command line: errors name the flag", "[command_line]") {
  CHECK(command_line_error({"--bogus"}) == "unknown flag --bogus (see --help)");
  CHECK(command_line_error({"--bogus=1"}) == "unknown flag --bogus (see --help)");
  CHECK(command_line_error({"-ca", "x"}) ==
        "unexpected argument \"-ca\" (flags start with --; see --help)");
  CHECK(command_line_error({"extra"}) ==
        "unexpected argument \"extra\" (flags start with --; see --help)");
  CHECK(command_line_error({"--ca"}) == "--ca: missing value");
  CHECK(command_line_error({"--ca", "--once"}) == "--ca: missing value");
  CHECK(command_line_error({"--config.file="}) == "--config.file: missing value");
  CHECK(command_line_error({"--once=true"}) == "--once: takes no value");
  CHECK(command_line_error({"--ca=a", "--ca=b"}) == "--ca: given more than once");
  CHECK(command_line_error({"--ca-port=x"}) == "--ca-port: expected an integer, got \"x\"");
  CHECK(command_line_error({"--ca-port", "-1"}) == "--ca-port: must be between 0 and 254, got -1");
  CHECK(command_line_error({"--sweep.interval=10"}) ==
        "--sweep.interval: invalid duration \"10\": missing unit (ms, s, m, h, d, w or y)");
  CHECK(command_line_error({"--log.level=loud"}) ==
        "--log.level: expected one of debug, info, warn, error, got \"loud\"");
  CHECK(command_line_error({"--web.listen-address=9690"}) ==
        "--web.listen-address: expected [host]:port such as \":9690\", \"127.0.0.1:9690\" or "
        "\"[::1]:9690\", got \"9690\"");
  // Errors in the file keep the file's own location.
  CHECK(command_line_error({"--config.file=/nonexistent.yaml"}) ==
        "/nonexistent.yaml: cannot read: No such file or directory");
}

TEST_CASE("command line: --help and --version work with a broken configuration", "[command_line]") {
  CHECK(parse({"--config.file=/nonexistent.yaml", "--help"}).show_help);
  CHECK(parse({"--ca-port=x", "--version"}).show_version);
  // Syntax errors still count: the user typed something unknown.
  CHECK(command_line_error({"--help", "--bogus"}) == "unknown flag --bogus (see --help)");
}

TEST_CASE("command line: usage lists every flag with its default", "[command_line]") {
  const std::string usage = ibfx::usage_text();
  for (const char* expected : {"--config.file=PATH",
                               "--web.listen-address=ADDR",
                               "--web.telemetry-path=PATH",
                               "--sweep.interval=DURATION",
                               "--ib.ca=NAME",
                               "--ib.ca-port=N",
                               "--ib.node-name-map=PATH",
                               "--state.directory=PATH",
                               "(default: \"/var/lib/ibfabric_exporter\")",
                               "--log.level=LEVEL",
                               "--log.format=FORMAT",
                               "--once",
                               "--check-config",
                               "--version",
                               "--help",
                               "-h",
                               "(default: \":9690\")",
                               "(default: \"10s\")",
                               "(default: \"0\")",
                               "(default: \"info\")",
                               "(default: \"logfmt\")",
                               "(default: \"/metrics\")",
                               "(default: none)",
                               "sweep twice one interval apart"}) {
    INFO(expected);
    CHECK(usage.find(expected) != std::string::npos);
  }
}
