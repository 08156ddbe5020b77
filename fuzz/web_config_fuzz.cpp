// libFuzzer target: the web config file (--web.config.file, exporter-toolkit
// format, http/web_config.h), reloaded on SIGHUP like the config file. The
// only acceptable failure is ConfigError. Certificates are not loaded here
// (check_web_config is OpenSSL's parser, not ours); file keys only check that
// the named file is readable.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.h"
#include "http/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ibfx::parse_web_config(text, "fuzz", "/nonexistent");
  } catch (const ibfx::ConfigError&) {
    // Expected for malformed input.
  }
  return 0;
}
