// The one parser of listen addresses ("[host]:port"): the config file and the
// --web.listen-address flag validate with it, the HTTP server binds with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ibfx {

struct ListenAddress {
  std::string host;  // empty (written "" or "*"): all interfaces
  std::uint16_t port = 0;
};

// "host:port", ":port", "*:port" or "[v6]:port"; port 0..65535 (0: any free
// port). Throws ConfigError "expected [host]:port such as ..., got \"...\"".
ListenAddress parse_listen_address(std::string_view text);

}  // namespace ibfx
