#include "daemon/daemon_config.h"

#include <utility>

#include "base/log.h"
#include "http/http_server.h"

namespace ibfx {

DaemonConfig load_daemon_config(CommandLine cli) {
  DaemonConfig loaded;
  if (cli.config_document) {
    loaded.analysis = parse_analysis_config(*cli.config_document, cli.config_file);
  }
  if (!cli.web_config_file.empty()) loaded.web = load_web_config(cli.web_config_file);
  check_web_config(loaded.web);  // loads the certificate and key now
  if (!cli.config.node_name_map_file.empty()) {
    loaded.names = load_node_name_map(cli.config.node_name_map_file);
  }
  loaded.cli = std::move(cli);
  return loaded;
}

void apply_log_settings(const Config& config) {
  set_log_level(parse_log_level(config.log_level));
  set_log_format(parse_log_format(config.log_format));
}

}  // namespace ibfx
