// The web configuration file (--web.config.file) in the format of the
// Prometheus exporter-toolkit, so a scrape config that already talks TLS and
// basic auth to node_exporter talks to this exporter unchanged:
//
//   tls_server_config:
//     cert_file: server.crt          # relative paths: to this file's directory
//     key_file: server.key
//     client_auth_type: RequireAndVerifyClientCert   # optional
//     client_ca_file: ca.crt                         # optional
//     min_version: TLS12                             # optional
//   http_server_config:
//     headers: {Strict-Transport-Security: max-age=31536000}
//   basic_auth_users:
//     prometheus: $2y$10$...                          # bcrypt hash
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibfx {

// exporter-toolkit's client_auth_type values (Go's tls.ClientAuthType).
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,
  kRequireAnyClientCert,
  kVerifyClientCertIfGiven,
  kRequireAndVerifyClientCert,
};

enum class TlsVersion { kTls10, kTls11, kTls12, kTls13 };

struct TlsServerConfig {
  std::string cert_file;  // absolute (resolved against the web config's directory)
  std::string key_file;
  std::string client_ca_file;  // empty: none
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  TlsVersion min_version = TlsVersion::kTls12;  // exporter-toolkit's default
  std::optional<TlsVersion> max_version;
  std::vector<std::string> cipher_suites;      // OpenSSL names (TLS <= 1.2), translated from Go's
  std::vector<std::string> curve_preferences;  // OpenSSL group names
  bool prefer_server_cipher_suites = true;
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;                        // nullopt: plain HTTP
  std::map<std::string, std::string> basic_auth_users;       // user -> bcrypt hash; empty: no auth
  std::vector<std::pair<std::string, std::string>> headers;  // added to every response
};

// Parses the file; errors are ConfigError "<file>:<line>: <key>: <what>".
// Checks structure, names, bcrypt hash syntax and that the referenced files are
// readable; the certificate and key themselves are loaded by HttpServer (see
// check_web_config in http_server.h).
WebConfig load_web_config(const std::string& path);
WebConfig parse_web_config(std::string_view yaml_text, const std::string& source_name,
                           const std::string& base_dir = "");

}  // namespace ibfx
