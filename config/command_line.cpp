// Command-line flags, spelled like the Prometheus exporters' (--web.listen-address).
#include "config/command_line.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "config/config.h"
#include "config/yaml_reader.h"

namespace ibfx {
namespace {

struct Flag {
  std::string_view name;        // without the leading "--"
  std::string_view value_name;  // empty: a switch that takes no value
  std::string_view key;         // the config key it overrides, if any
  std::string_view help;
  // The spelling of earlier versions, still accepted (not in --help; the man
  // page lists it).
  std::string_view old_name = "";
};

constexpr std::array<Flag, 19> kFlags{{
    {"config.file", "PATH", "", "YAML configuration file; the other flags override it."},
    {"web.listen-address", "ADDR", "listen_address", "Address to serve HTTP on, [host]:port."},
    {"web.telemetry-path", "PATH", "telemetry_path", "Path to serve the metrics on."},
    {"web.config.file", "PATH", "",
     "exporter-toolkit web config file enabling TLS and/or basic auth (empty: plain HTTP)."},
    {"web.header-timeout", "DURATION", "web.header_timeout",
     "Time a client has for the TLS handshake, request line and headers."},
    {"web.idle-timeout", "DURATION", "web.idle_timeout",
     "Time a kept-alive connection may wait for its next request."},
    {"web.max-connections", "N", "web.max_connections",
     "Connections held at once (0: as many as RLIMIT_NOFILE allows)."},
    {"web.max-connections-per-client", "N", "web.max_connections_per_client",
     "Connections one client address may hold (0: no limit)."},
    {"sweep.interval", "DURATION", "sweep_interval",
     "How often to read every port's counters (at least 100ms)."},
    {"ib.ca", "NAME", "ca", "Local HCA, e.g. mlx5_0 (empty: the first active one).", "ca"},
    {"ib.ca-port", "N", "ca_port", "Port of that HCA (0: first active port).", "ca-port"},
    {"ib.node-name-map", "PATH", "node_name_map_file",
     "infiniband-diags node-name-map file (empty: none).", "node-name-map"},
    {"state.directory", "PATH", "state_directory",
     "Directory keeping the congestion events across restarts (empty: not kept)."},
    {"log.level", "LEVEL", "log_level", "Log level: debug, info, warn or error."},
    {"log.format", "FORMAT", "log_format", "Log line format: logfmt or json."},
    {"once", "", "",
     "Discover, sweep twice one interval apart (rates need two readings), print the "
     "exposition and exit."},
    {"check-config", "", "", "Validate the configuration and exit."},
    {"version", "", "", "Print the version and exit."},
    {"help", "", "", "Show this help and exit."},
}};

const Flag* find_flag(std::string_view name) {
  const auto it = std::find_if(kFlags.begin(), kFlags.end(), [&](const Flag& f) {
    return f.name == name || (!f.old_name.empty() && f.old_name == name);
  });
  return it == kFlags.end() ? nullptr : &*it;
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine result;
  // Values are applied only after the config file is loaded, wherever
  // --config.file appears, so that flags always win.
  struct Value {
    const Flag* flag;
    std::string typed;  // the spelling given, for messages
    std::string text;
  };
  std::vector<Value> values;
  std::set<std::string_view> seen;
  for (int i = 1; i < argc && argv != nullptr; ++i) {
    std::string_view arg = argv[i] != nullptr ? argv[i] : "";
    if (arg == "-h") arg = "--help";
    if (!arg.starts_with("--")) {
      throw ConfigError("unexpected argument \"" + std::string(arg) +
                        "\" (flags start with --; see --help)");
    }
    const auto equals = arg.find('=');
    const std::string_view name =
        arg.substr(2, equals == std::string_view::npos ? arg.npos : equals - 2);
    const Flag* flag = find_flag(name);
    if (flag == nullptr) throw ConfigError("unknown flag --" + std::string(name) + " (see --help)");
    // Messages use the spelling typed.
    const std::string dashed = "--" + std::string(name);
    // As in kingpin, a repeated flag (in either spelling) is a mistake rather
    // than "last one wins".
    if (!seen.insert(flag->name).second) throw ConfigError(dashed + ": given more than once");

    std::optional<std::string_view> value;
    if (equals != std::string_view::npos) value = arg.substr(equals + 1);
    if (flag->value_name.empty()) {
      if (value) throw ConfigError(dashed + ": takes no value");
      if (flag->name == "once") result.once = true;
      if (flag->name == "check-config") result.check_config = true;
      if (flag->name == "version") result.show_version = true;
      if (flag->name == "help") result.show_help = true;
      continue;
    }
    if (!value) {
      // "--ca --once" almost certainly lost the CA name; don't eat the next flag.
      if (i + 1 >= argc || argv[i + 1] == nullptr ||
          std::string_view(argv[i + 1]).starts_with("--")) {
        throw ConfigError(dashed + ": missing value");
      }
      value = argv[++i];
    }
    values.emplace_back(Value{flag, std::string(name), std::string(*value)});
  }
  // Help and version must work even when the configuration is broken.
  if (result.show_help || result.show_version) return result;

  for (const auto& [flag, typed, value] : values) {
    // Loaded by the daemon (http/web_config.h), which owns its format.
    if (flag->name == "web.config.file") result.web_config_file = value;
    if (flag->name != "config.file") continue;
    if (value.empty()) throw ConfigError("--config.file: missing value");
    result.config_file = value;
    // Parsed once: main hands the same document's analysis sections on.
    auto document = std::make_shared<const YAML::Node>(yaml::load_document_file(value));
    result.config = parse_config_document(*document, value);
    result.config_document = std::move(document);
  }
  for (const auto& [flag, typed, value] : values) {
    if (flag->key.empty()) continue;
    try {
      set_config_value(result.config, flag->key, value);
    } catch (const ConfigError& e) {
      throw ConfigError("--" + typed + ": " + e.what());
    }
  }
  return result;
}

std::string usage_text() {
  const Config defaults;
  std::string text =
      "Usage: ibfabric_exporter [flags]\n"
      "\n"
      "Exports InfiniBand fabric port counters and topology to Prometheus.\n"
      "Flags accept --flag=value and --flag value.\n"
      "\n"
      "Flags:\n";
  for (const Flag& flag : kFlags) {
    // Appended piecewise: GCC 12 at -O3 warns about `"=" + std::string(...)`
    // (a -Wrestrict false positive, GCC bug 105329) in users' Release builds.
    std::string left = flag.name == "help" ? "  -h, --" : "  --";
    left += flag.name;
    if (!flag.value_name.empty()) {
      left += '=';
      left += flag.value_name;
    }
    left.resize(std::max<std::size_t>(left.size() + 2, 30), ' ');
    text += left + std::string(flag.help);
    if (!flag.key.empty()) {
      text += " (default: \"" + config_value_text(defaults, flag.key) + "\")";
    } else if (!flag.value_name.empty()) {
      text += " (default: none)";
    }
    text += "\n";
  }
  return text;
}

}  // namespace ibfx
