// Everything the daemon reads from files, loaded by one function at start-up
// and again on SIGHUP, so that both check exactly the same things and a
// reload applies all or nothing.
#pragma once

#include "analysis/analysis_config.h"
#include "config/command_line.h"
#include "config/config.h"
#include "config/node_name_map.h"
#include "http/web_config.h"

namespace ibfx {

struct DaemonConfig {
  CommandLine cli;          // the config file (parsed once) with the flags over it
  AnalysisConfig analysis;  // that file's topology: and scores: sections
  WebConfig web;            // --web.config.file, certificate and key checked
  NodeNameMap names;        // config.node_name_map_file
};

// Loads what `cli` names: the web config (its certificate and key too, for
// --check-config), the node-name-map, and the analysis sections of the
// document parse_command_line already read. Applies nothing; throws
// ConfigError (or std::exception from OpenSSL) naming the file.
DaemonConfig load_daemon_config(CommandLine cli);

// The logger's level and format from the configuration (base/log.h).
void apply_log_settings(const Config& config);

}  // namespace ibfx
