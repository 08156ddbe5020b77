// libFuzzer target: the YAML config parser. Operators hand us arbitrary files
// (and reload them on SIGHUP), so the only acceptable failure is ConfigError;
// any other exception escapes to libFuzzer and is reported as a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ibfx::Config config = ibfx::parse_config_yaml(text, "fuzz");
    // Whatever was accepted must also render back through the generic
    // accessors (--check-config and reload diffs use them).
    for (std::string_view key : ibfx::config_keys()) {
      (void)ibfx::config_value_text(config, key);
    }
  } catch (const ibfx::ConfigError&) {
    // Expected for malformed input.
  }
  return 0;
}
