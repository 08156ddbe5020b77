#include "http/web_config.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>

#include "config/config_error.h"
#include "config/text_file.h"
#include "config/yaml_reader.h"
#include "http/basic_auth.h"

namespace ibfx {
namespace {

constexpr std::size_t kMaxWebConfigBytes = std::size_t{1} << 20;
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Go's cipher suite names (what exporter-toolkit configs contain) to OpenSSL's.
constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kCipherSuites{{
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kCurves{{
    {"CurveP256", "P-256"},
    {"CurveP384", "P-384"},
    {"CurveP521", "P-521"},
    {"X25519", "X25519"},
}};

constexpr std::array<std::pair<std::string_view, ClientAuth>, 5> kClientAuth{{
    {"NoClientCert", ClientAuth::kNoClientCert},
    {"RequestClientCert", ClientAuth::kRequestClientCert},
    {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
    {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
    {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
}};

constexpr std::array<std::pair<std::string_view, TlsVersion>, 4> kVersions{{
    {"TLS10", TlsVersion::kTls10},
    {"TLS11", TlsVersion::kTls11},
    {"TLS12", TlsVersion::kTls12},
    {"TLS13", TlsVersion::kTls13},
}};

// exporter-toolkit allows only these security headers (values checked where
// the header has a fixed vocabulary); the server owns every other header.
bool header_value_ok(const std::string& name, const std::string& value) {
  const std::string n = lower(name);
  const std::string v = lower(value);
  if (n == "x-content-type-options") return v == "nosniff";
  if (n == "x-frame-options") return v == "deny" || v == "sameorigin";
  return n == "strict-transport-security" || n == "x-xss-protection" ||
         n == "content-security-policy";
}

// "section.key", for messages.
std::string dotted(std::string_view section, std::string_view key) {
  std::string out(section);
  out += '.';
  out += key;
  return out;
}

class Parser {
 public:
  Parser(std::string source, std::string base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  WebConfig parse(std::string_view text) {
    const YAML::Node root = yaml::load_document(text, source_);
    WebConfig config;
    if (!root || root.IsNull()) return config;  // an empty file: plain HTTP, no auth
    expect_map(root, "", "the top level");
    for (const auto& entry : root) {
      const std::string key = key_of(entry.first, "");
      const YAML::Node& value = entry.second;
      if (key == "tls_server_config") {
        parse_tls(value, config);
      } else if (key == "http_server_config") {
        parse_http(value, config);
      } else if (key == "basic_auth_users") {
        parse_users(value, config);
      } else {
        fail(entry.first, key,
             "unknown key (supported: tls_server_config, http_server_config, basic_auth_users)");
      }
    }
    return config;
  }

 private:
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& what) const {
    // A null value has no mark of its own: the line of the section it is in.
    const int line = yaml::line_of(node, line_);
    throw ConfigError(source_ + ":" + std::to_string(line) + ": " +
                      (key.empty() ? "" : printable(key) + ": ") + what);
  }

  // A mapping's key, which must be a plain scalar (user names included).
  std::string key_of(const YAML::Node& node, const std::string& section) {
    line_ = yaml::line_of(node, line_);
    if (!node.IsScalar()) fail(node, section, "keys must be plain names");
    return node.Scalar();
  }

  void expect_map(const YAML::Node& node, const std::string& key, const char* what) const {
    if (!node.IsMap() && !node.IsNull()) fail(node, key, std::string(what) + " must be a mapping");
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (node.IsNull()) return "";
    if (!node.IsScalar()) fail(node, key, "expected a string");
    return node.Scalar();
  }

  // Relative paths are relative to the web config file, as in exporter-toolkit.
  std::string file(const YAML::Node& node, const std::string& key) const {
    std::string path = scalar(node, key);
    if (path.empty()) return path;
    if (path.front() != '/' && !base_dir_.empty()) path = base_dir_ + "/" + path;
    if (::access(path.c_str(), R_OK) != 0) {
      fail(node, key, "cannot read " + path + ": " + std::strerror(errno));
    }
    return path;
  }

  template <typename T, std::size_t N>
  T lookup(const YAML::Node& node, const std::string& key,
           const std::array<std::pair<std::string_view, T>, N>& table) const {
    const std::string text = scalar(node, key);
    std::string names;
    for (const auto& [name, value] : table) {
      if (name == text) return value;
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    fail(node, key, "unknown value " + quote(text) + " (expected one of " + names + ")");
  }

  std::vector<std::string> list(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> out;
    if (node.IsNull()) return out;
    if (!node.IsSequence()) fail(node, key, "expected a list");
    for (const auto& item : node) out.push_back(scalar(item, key));
    return out;
  }

  void parse_tls(const YAML::Node& node, WebConfig& config) {
    const std::string section = "tls_server_config";
    expect_map(node, section, section.c_str());
    TlsServerConfig tls;
    for (const auto& entry : node) {
      const std::string name = key_of(entry.first, section);
      const std::string key = dotted(section, name);
      const YAML::Node& v = entry.second;
      if (name == "cert_file") {
        tls.cert_file = file(v, key);
      } else if (name == "key_file") {
        tls.key_file = file(v, key);
      } else if (name == "client_ca_file") {
        tls.client_ca_file = file(v, key);
      } else if (name == "client_auth_type") {
        tls.client_auth = lookup(v, key, kClientAuth);
      } else if (name == "min_version") {
        tls.min_version = lookup(v, key, kVersions);
      } else if (name == "max_version") {
        tls.max_version = lookup(v, key, kVersions);
      } else if (name == "cipher_suites") {
        for (const auto& suite : list(v, key)) {
          const auto it = std::find_if(kCipherSuites.begin(), kCipherSuites.end(),
                                       [&](const auto& p) { return p.first == suite; });
          if (it == kCipherSuites.end())
            fail(v, key, "unknown or unsupported suite " + quote(suite));
          tls.cipher_suites.emplace_back(it->second);
        }
      } else if (name == "curve_preferences") {
        for (const auto& curve : list(v, key)) {
          const auto it = std::find_if(kCurves.begin(), kCurves.end(),
                                       [&](const auto& p) { return p.first == curve; });
          if (it == kCurves.end()) fail(v, key, "unknown curve " + quote(curve));
          tls.curve_preferences.emplace_back(it->second);
        }
      } else if (name == "prefer_server_cipher_suites") {
        const std::string b = scalar(v, key);
        if (b != "true" && b != "false") fail(v, key, "expected true or false");
        tls.prefer_server_cipher_suites = b == "true";
      } else if (name == "cert" || name == "key" || name == "client_ca" ||
                 name == "client_allowed_sans") {
        // Rejected rather than ignored: silently dropping a security setting
        // would serve with weaker checks than the operator asked for.
        fail(entry.first, key, "not supported by ibfabric_exporter (use the *_file keys)");
      } else {
        fail(entry.first, key, "unknown key");
      }
    }
    // As in exporter-toolkit: a TLS section without certificate and key means plain HTTP.
    if (tls.cert_file.empty() && tls.key_file.empty() && tls.client_ca_file.empty()) return;
    if (tls.cert_file.empty()) fail(node, section, "missing cert_file");
    if (tls.key_file.empty()) fail(node, section, "missing key_file");
    const bool verifies = tls.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
                          tls.client_auth == ClientAuth::kRequireAndVerifyClientCert;
    if (!tls.client_ca_file.empty() && tls.client_auth == ClientAuth::kNoClientCert) {
      fail(node, section, "client_ca_file is set but client_auth_type is NoClientCert");
    }
    if (verifies && tls.client_ca_file.empty()) {
      fail(node, section, "client_auth_type verifies client certificates: set client_ca_file");
    }
    if (tls.max_version && *tls.max_version < tls.min_version) {
      fail(node, section, "max_version is below min_version");
    }
    config.tls = std::move(tls);
  }

  void parse_http(const YAML::Node& node, WebConfig& config) {
    const std::string section = "http_server_config";
    expect_map(node, section, section.c_str());
    for (const auto& entry : node) {
      const std::string name = key_of(entry.first, section);
      const std::string key = dotted(section, name);
      if (name == "http2") {
        // HTTP/2 is an upgrade we do not offer; Prometheus falls back to HTTP/1.1.
        continue;
      }
      if (name != "headers") fail(entry.first, key, "unknown key (supported: headers, http2)");
      expect_map(entry.second, key, key.c_str());
      for (const auto& header : entry.second) {
        const std::string hname = key_of(header.first, key);
        const std::string hvalue = scalar(header.second, dotted(key, hname));
        if (!header_value_ok(hname, hvalue)) {
          fail(header.first, dotted(key, hname),
               "header not allowed or invalid value (allowed: Strict-Transport-Security, "
               "X-Content-Type-Options: nosniff, X-Frame-Options: deny|sameorigin, "
               "X-XSS-Protection, Content-Security-Policy)");
        }
        config.headers.emplace_back(hname, hvalue);
      }
    }
  }

  void parse_users(const YAML::Node& node, WebConfig& config) {
    const std::string section = "basic_auth_users";
    expect_map(node, section, section.c_str());
    for (const auto& entry : node) {
      const std::string user = key_of(entry.first, section);
      const std::string key = dotted(section, user);
      if (user.empty() || user.find(':') != std::string::npos) {
        fail(entry.first, key, "user names must be non-empty and contain no ':'");
      }
      const std::string hash = scalar(entry.second, key);
      if (!is_bcrypt_hash(hash)) {
        fail(entry.second, key,
             "expected a bcrypt hash ($2y$..., 60 characters, e.g. from `htpasswd -nBC 10 "
             "user`), not a plain password");
      }
      config.basic_auth_users[user] = hash;
    }
  }

  std::string source_;
  std::string base_dir_;
  int line_ = 1;  // the line of the key being read, for values without a mark
};

}  // namespace

WebConfig parse_web_config(std::string_view yaml_text, const std::string& source_name,
                           const std::string& base_dir) {
  return Parser(source_name, base_dir).parse(yaml_text);
}

WebConfig load_web_config(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return parse_web_config(read_text_file(path, kMaxWebConfigBytes), path, dir.empty() ? "/" : dir);
}

}  // namespace ibfx
