#include "http/http_security.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>

#include "config/config_error.h"

namespace ibfx {
namespace {

namespace ssl = boost::asio::ssl;

std::string openssl_error() {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

int openssl_version(TlsVersion v) {
  switch (v) {
    case TlsVersion::kTls10:
      return TLS1_VERSION;
    case TlsVersion::kTls11:
      return TLS1_1_VERSION;
    case TlsVersion::kTls12:
      return TLS1_2_VERSION;
    case TlsVersion::kTls13:
      return TLS1_3_VERSION;
  }
  return TLS1_2_VERSION;
}

std::shared_ptr<ssl::context> make_tls_context(const TlsServerConfig& tls) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  const auto check = [](bool ok, const std::string& what) {
    if (!ok) throw ConfigError("tls_server_config: " + what + ": " + openssl_error());
  };
  ERR_clear_error();
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                   ssl::context::single_dh_use);
  // An idle TLS connection then costs no 16 KiB record buffers: OpenSSL frees
  // them whenever nothing is buffered, so a flood of idle or handshaking
  // clients costs memory by the connection, not by the buffer.
  SSL_CTX_set_mode(native, SSL_MODE_RELEASE_BUFFERS);
  check(SSL_CTX_set_min_proto_version(native, openssl_version(tls.min_version)) == 1,
        "min_version");
  if (tls.max_version) {
    check(SSL_CTX_set_max_proto_version(native, openssl_version(*tls.max_version)) == 1,
          "max_version");
  }
  check(SSL_CTX_use_certificate_chain_file(native, tls.cert_file.c_str()) == 1,
        "cert_file " + tls.cert_file);
  check(SSL_CTX_use_PrivateKey_file(native, tls.key_file.c_str(), SSL_FILETYPE_PEM) == 1,
        "key_file " + tls.key_file);
  check(SSL_CTX_check_private_key(native) == 1, "key_file does not match cert_file");
  if (!tls.cipher_suites.empty()) {
    std::string list;
    for (const auto& c : tls.cipher_suites) list += (list.empty() ? "" : ":") + c;
    check(SSL_CTX_set_cipher_list(native, list.c_str()) == 1, "cipher_suites");
  }
  if (!tls.curve_preferences.empty()) {
    std::string list;
    for (const auto& c : tls.curve_preferences) list += (list.empty() ? "" : ":") + c;
    check(SSL_CTX_set1_groups_list(native, list.c_str()) == 1, "curve_preferences");
  }
  if (tls.prefer_server_cipher_suites) SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (!tls.client_ca_file.empty()) {
    check(SSL_CTX_load_verify_locations(native, tls.client_ca_file.c_str(), nullptr) == 1,
          "client_ca_file " + tls.client_ca_file);
    // Tells clients which CAs we accept, so they pick the right certificate.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str());
    check(names != nullptr, "client_ca_file " + tls.client_ca_file);
    SSL_CTX_set_client_CA_list(native, names);
  }
  // Go's ClientAuthType semantics: "Request"/"RequireAny" ask for a
  // certificate but accept any; the "Verify" ones check it against the CA.
  const auto accept_any = [](bool, ssl::verify_context&) { return true; };
  switch (tls.client_auth) {
    case ClientAuth::kNoClientCert:
      ctx->set_verify_mode(ssl::verify_none);
      break;
    case ClientAuth::kRequestClientCert:
      ctx->set_verify_mode(ssl::verify_peer);
      ctx->set_verify_callback(accept_any);
      break;
    case ClientAuth::kRequireAnyClientCert:
      ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      ctx->set_verify_callback(accept_any);
      break;
    case ClientAuth::kVerifyClientCertIfGiven:
      ctx->set_verify_mode(ssl::verify_peer);
      break;
    case ClientAuth::kRequireAndVerifyClientCert:
      ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      break;
  }
  return ctx;
}

}  // namespace

std::shared_ptr<const HttpSecurity> make_http_security(const WebConfig& web) {
  auto security = std::make_shared<HttpSecurity>();
  if (web.tls) security->tls = make_tls_context(*web.tls);
  if (!web.basic_auth_users.empty()) {
    security->authenticator = std::make_shared<BasicAuthenticator>(web.basic_auth_users);
  }
  security->headers = web.headers;
  return security;
}

}  // namespace ibfx
