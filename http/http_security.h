// How the HTTP server secures and authenticates a connection, built from the
// web config (http/web_config.h): the TLS context (OpenSSL through
// Boost.Asio's ssl::context, with exporter-toolkit's semantics), the basic
// auth users, and the extra response headers.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http/basic_auth.h"
#include "http/web_config.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace ibfx {

// Immutable, shared by the sessions accepted while it was current (a reload
// swaps in a new one).
struct HttpSecurity {
  std::shared_ptr<boost::asio::ssl::context> tls;     // null: plain HTTP
  std::shared_ptr<BasicAuthenticator> authenticator;  // null: no auth
  std::vector<std::pair<std::string, std::string>> headers;
};

// Loads the certificate, key and CA files now; throws ConfigError
// "tls_server_config: <what>: <OpenSSL's reason>".
std::shared_ptr<const HttpSecurity> make_http_security(const WebConfig& web);

}  // namespace ibfx
