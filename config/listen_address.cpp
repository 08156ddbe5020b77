#include "config/listen_address.h"

#include <charconv>

#include "base/log_text.h"
#include "config/config.h"
#include "config/config_error.h"

namespace ibfx {

ListenAddress parse_listen_address(std::string_view text) {
  const auto bad = [&] {
    return ConfigError(
        "expected [host]:port such as \":9690\", \"127.0.0.1:9690\" or \"[::1]:9690\", got " +
        quote(text));
  };
  ListenAddress address;
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    // An IPv6 literal: its colons are why it needs the brackets.
    const auto close = text.find(']');
    if (close == std::string_view::npos || text.substr(close + 1, 1) != ":") throw bad();
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) throw bad();
    host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos) throw bad();
    port = text.substr(colon + 1);
  }
  unsigned number = 0;
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || number > 65535) {
    throw bad();
  }
  address.host = host == "*" ? std::string() : std::string(host);
  address.port = static_cast<std::uint16_t>(number);
  return address;
}

}  // namespace ibfx
