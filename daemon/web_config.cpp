#include "daemon/web_config.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <memory>
#include <string>

#include "config/config.h"

namespace ibfx {
namespace {

constexpr std::size_t kMaxWebConfigBytes = 1024 * 1024;
// Accepted credentials remembered at once; a handful of scrapers need a few
// entries, and the bound keeps a flood of distinct valid logins from growing
// memory without limit.
constexpr std::size_t kMaxCachedCredentials = 256;

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

bool is_bcrypt_hash(const std::string& hash) {
  return hash.size() == 60 &&
         (hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$"));
}

class Parser {
 public:
  Parser(std::string source, std::string base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  WebConfig parse(std::string_view text) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      const std::string where =
          e.mark.is_null() ? source_ : source_ + ":" + std::to_string(e.mark.line + 1);
      throw ConfigError(where + ": invalid YAML: " + e.msg);
    }
    WebConfig config;
    if (!root || root.IsNull()) return config;  // an empty file: plain HTTP, no auth
    expect_map(root, "", "the top level");
    for (const auto& entry : root) {
      const std::string key = entry.first.as<std::string>();
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
    const std::string line =
        node.Mark().is_null() ? "" : ":" + std::to_string(node.Mark().line + 1);
    throw ConfigError(source_ + line + ": " + (key.empty() ? "" : key + ": ") + what);
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
    fail(node, key, "unknown value \"" + text + "\" (expected one of " + names + ")");
  }

  std::vector<std::string> list(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> out;
    if (node.IsNull()) return out;
    if (!node.IsSequence()) fail(node, key, "expected a list");
    for (const auto& item : node) out.push_back(scalar(item, key));
    return out;
  }

  void parse_tls(const YAML::Node& node, WebConfig& config) const {
    const std::string section = "tls_server_config";
    expect_map(node, section, section.c_str());
    TlsServerConfig tls;
    for (const auto& entry : node) {
      const std::string name = entry.first.as<std::string>();
      const std::string key = section + "." + name;
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
          if (it == kCipherSuites.end()) fail(v, key, "unknown or unsupported suite " + suite);
          tls.cipher_suites.emplace_back(it->second);
        }
      } else if (name == "curve_preferences") {
        for (const auto& curve : list(v, key)) {
          const auto it = std::find_if(kCurves.begin(), kCurves.end(),
                                       [&](const auto& p) { return p.first == curve; });
          if (it == kCurves.end()) fail(v, key, "unknown curve " + curve);
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

  void parse_http(const YAML::Node& node, WebConfig& config) const {
    const std::string section = "http_server_config";
    expect_map(node, section, section.c_str());
    for (const auto& entry : node) {
      const std::string name = entry.first.as<std::string>();
      const std::string key = section + "." + name;
      if (name == "http2") {
        // HTTP/2 is an upgrade we do not offer; Prometheus falls back to HTTP/1.1.
        continue;
      }
      if (name != "headers") fail(entry.first, key, "unknown key (supported: headers, http2)");
      expect_map(entry.second, key, key.c_str());
      for (const auto& header : entry.second) {
        const std::string hname = header.first.as<std::string>();
        const std::string hvalue = scalar(header.second, key + "." + hname);
        if (!header_value_ok(hname, hvalue)) {
          fail(header.first, key + "." + hname,
               "header not allowed or invalid value (allowed: Strict-Transport-Security, "
               "X-Content-Type-Options: nosniff, X-Frame-Options: deny|sameorigin, "
               "X-XSS-Protection, Content-Security-Policy)");
        }
        config.headers.emplace_back(hname, hvalue);
      }
    }
  }

  void parse_users(const YAML::Node& node, WebConfig& config) const {
    const std::string section = "basic_auth_users";
    expect_map(node, section, section.c_str());
    for (const auto& entry : node) {
      const std::string user = entry.first.as<std::string>();
      const std::string key = section + "." + user;
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
};

// SHA-256, so the cache holds no plaintext passwords.
std::string digest(std::string_view a, std::string_view b, std::string_view c) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
  const auto feed = [&](std::string_view s) {
    // Length-prefixed, so ("ab","c") and ("a","bc") differ.
    const std::string size = std::to_string(s.size()) + ":";
    EVP_DigestUpdate(ctx.get(), size.data(), size.size());
    EVP_DigestUpdate(ctx.get(), s.data(), s.size());
  };
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return {};
  feed(a);
  feed(b);
  feed(c);
  if (EVP_DigestFinal_ex(ctx.get(), md.data(), &len) != 1) return {};
  return std::string(reinterpret_cast<const char*>(md.data()), len);
}

}  // namespace

WebConfig parse_web_config(std::string_view yaml_text, const std::string& source_name,
                           const std::string& base_dir) {
  return Parser(source_name, base_dir).parse(yaml_text);
}

WebConfig load_web_config(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return parse_web_config(detail::read_text_file(path, kMaxWebConfigBytes), path,
                          dir.empty() ? "/" : dir);
}

bool bcrypt_verify(std::string_view password, const std::string& hash) {
  if (!is_bcrypt_hash(hash) || password.find('\0') != std::string_view::npos) return false;
  // crypt_data is large (~32 KiB): keep it off the io_context thread's stack.
  auto data = std::make_unique<crypt_data>();
  const std::string pw(password);
  const char* out = crypt_rn(pw.c_str(), hash.c_str(), data.get(), sizeof(crypt_data));
  if (out == nullptr || out[0] == '*') return false;
  return std::strlen(out) == hash.size() && CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

BasicAuthenticator::BasicAuthenticator(std::map<std::string, std::string> users)
    : users_(std::move(users)) {}

bool BasicAuthenticator::check(std::string_view user, std::string_view password) {
  const auto it = users_.find(std::string(user));
  // An unknown user still costs one bcrypt, so response time does not tell
  // which user names exist.
  static const std::string kDummyHash =
      "$2y$10$wnTT/LOhs4JD5MpPN6zj5uW2bsGqwApzDdYaQL7yvEkFezc4TywLS";
  const std::string& hash = it == users_.end() ? kDummyHash : it->second;
  const std::string key = digest(user, hash, password);
  {
    std::lock_guard lock(mutex_);
    if (it != users_.end() && !key.empty() && cache_.count(key) != 0) return true;
  }
  const bool ok = bcrypt_verify(password, hash) && it != users_.end();
  if (ok && !key.empty()) {
    std::lock_guard lock(mutex_);
    if (cache_.size() >= kMaxCachedCredentials) cache_.clear();
    cache_.insert(key);
  }
  return ok;
}

bool BasicAuthenticator::check_header(std::string_view authorization) {
  while (!authorization.empty() && authorization.front() == ' ') authorization.remove_prefix(1);
  const auto space = authorization.find(' ');
  if (space == std::string_view::npos || lower(authorization.substr(0, space)) != "basic") {
    return false;
  }
  std::string_view encoded = authorization.substr(space + 1);
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  const auto decoded = base64_decode(encoded);
  if (!decoded) return false;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return false;
  return check(std::string_view(*decoded).substr(0, colon),
               std::string_view(*decoded).substr(colon + 1));
}

std::optional<std::string> base64_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  unsigned int buffer = 0;
  int bits = 0;
  for (char c : text) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+') v = 62;
    if (c == '/') v = 63;
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned int>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  if (bits >= 6) return std::nullopt;  // a single dangling character
  return out;
}

}  // namespace ibfx
