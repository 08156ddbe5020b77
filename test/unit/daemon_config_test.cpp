// load_daemon_config: what the daemon reads from files at start-up and on
// SIGHUP, from one parse of the config file: its analysis sections, the web
// config (with its TLS files loaded), the node-name-map; a bad file is named.
#include "daemon/daemon_config.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/command_line.h"
#include "test/support/basic_auth_sample.h"
#include "test/support/temp_dir.h"

using namespace ibfx;

namespace {

using ibfx::test::kHash;

using ibfx::test::TempDir;

CommandLine parse_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "ibfabric_exporter");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

std::string daemon_config_error(const CommandLine& cli) {
  try {
    load_daemon_config(cli);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("load_daemon_config hands on the config file's sections, names and web config",
          "[daemon_config]") {
  TempDir dir;
  const std::string names = dir.write("names", "0x0000000000000100 \"spine-a\"\n");
  const std::string config = dir.write("config.yaml", "node_name_map_file: " + names +
                                                          "\n"
                                                          "topology:\n"
                                                          "  rail_regex: \"hca([0-9]+)$\"\n"
                                                          "scores:\n"
                                                          "  top_k: 7\n");
  const std::string web = dir.write("web.yml", std::string("basic_auth_users:\n  prom: ") + kHash +
                                                   "\nhttp_server_config:\n  headers:\n"
                                                   "    X-Frame-Options: deny\n");
  const DaemonConfig loaded =
      load_daemon_config(parse_cli({"--config.file=" + config, "--web.config.file=" + web}));
  CHECK(loaded.cli.config_file == config);
  CHECK(loaded.cli.config.node_name_map_file == names);
  CHECK(loaded.analysis.topology.rail_regex == "hca([0-9]+)$");
  CHECK(loaded.analysis.scores.top_k == 7);
  REQUIRE(loaded.names.size() == 1);
  CHECK(loaded.names.at(0x100) == "spine-a");
  CHECK(loaded.web.basic_auth_users.at("prom") == kHash);
  REQUIRE(loaded.web.headers.size() == 1);
  CHECK(loaded.web.headers[0].first == "X-Frame-Options");
  CHECK_FALSE(loaded.web.tls.has_value());
}

TEST_CASE("load_daemon_config without files gives the defaults", "[daemon_config]") {
  const DaemonConfig loaded = load_daemon_config(parse_cli({}));
  CHECK(loaded.cli.config == Config{});
  CHECK(loaded.names.empty());
  CHECK(loaded.web.basic_auth_users.empty());
  CHECK_FALSE(loaded.web.tls.has_value());
  CHECK(loaded.analysis.topology.rail_regex == TopologyConfig{}.rail_regex);
  CHECK(loaded.analysis.scores.top_k == ScoreConfig{}.top_k);
}

TEST_CASE("load_daemon_config names the file that is wrong", "[daemon_config]") {
  TempDir dir;
  SECTION("an analysis section") {
    const std::string config =
        dir.write("config.yaml", "sweep_interval: 5s\nscores:\n  top_k: -1\n");
    const std::string e = daemon_config_error(parse_cli({"--config.file=" + config}));
    CHECK(e.rfind(config + ":3: scores.top_k: ", 0) == 0);
  }
  SECTION("the web config") {
    const std::string web = dir.write("web.yml", "basic_auth_users:\n  alice: hunter2\n");
    const std::string e = daemon_config_error(parse_cli({"--web.config.file=" + web}));
    CHECK(e.rfind(web + ":2: basic_auth_users.alice: expected a bcrypt hash", 0) == 0);
  }
  SECTION("a TLS certificate that does not load") {
    dir.write("tls.crt", "not a certificate");
    dir.write("tls.key", "not a key");
    const std::string web =
        dir.write("web.yml", "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n");
    const std::string e = daemon_config_error(parse_cli({"--web.config.file=" + web}));
    CHECK(e.find("tls_server_config") != std::string::npos);
    CHECK(e.find("tls.crt") != std::string::npos);
  }
  SECTION("the node-name-map") {
    const std::string config = dir.write(
        "config.yaml", "node_name_map_file: " + dir.write("names", "0xzz \"x\"\n") + "\n");
    const std::string e = daemon_config_error(parse_cli({"--config.file=" + config}));
    CHECK(e.find("names:1:") != std::string::npos);
  }
}
