// The one error of configuration: a bad file, flag or value, found at
// start-up or on reload, never while the daemon runs.
#pragma once

#include <stdexcept>

namespace ibfx {

// Thrown only during start-up / reload validation. The message is meant for
// an operator: "<file>:<line>: <key>: <what is wrong>".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ibfx
