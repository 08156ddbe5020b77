// The daemon's command line: flags over the config file (which it reads
// once, config/config.h), the web config's path and the run modes.
#pragma once

#include <memory>
#include <string>

#include "config/config.h"

// yaml-cpp's own spelling of its namespace.
namespace YAML {  // NOLINT(readability-identifier-naming)
class Node;
}

namespace ibfx {

struct CommandLine {
  Config config;
  std::string config_file;  // empty: built-in defaults only
  // config_file's YAML document, parsed once; null without a file. The
  // daemon hands its analysis sections to analysis/ from here.
  std::shared_ptr<const YAML::Node> config_document;
  std::string web_config_file;  // --web.config.file; empty: plain HTTP, no auth
  bool once = false;
  bool check_config = false;
  bool show_version = false;
  bool show_help = false;
};

// Parses argv. Flags override the config file. Throws ConfigError on an
// unknown flag, a missing value or a bad value (naming the flag).
CommandLine parse_command_line(int argc, const char* const* argv);
std::string usage_text();

}  // namespace ibfx
