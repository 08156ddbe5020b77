// libFuzzer target: the analysis sections of the config file (`topology:`
// and `scores:`, analysis/analysis_config.h), read through the same YAML
// reader as the rest of the file. The only acceptable failure is ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/analysis_config.h"
#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ibfx::parse_analysis_config(text, "fuzz");
  } catch (const ibfx::ConfigError&) {
    // Expected for malformed input.
  }
  return 0;
}
