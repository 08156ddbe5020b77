// HTTP basic authentication against the web config's basic_auth_users
// (http/web_config.h): bcrypt through libcrypt, a bounded cache of accepted
// credentials, and the header's base64 through OpenSSL.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace ibfx {

// bcrypt ($2a$, $2b$, $2y$) check through libcrypt's crypt_rn(3), comparing
// in constant time. Slow by design (the hash's cost factor).
bool bcrypt_verify(std::string_view password, const std::string& hash);

// True for the shape of a bcrypt hash: "$2a$", "$2b$" or "$2y$", 60 characters.
bool is_bcrypt_hash(const std::string& hash);

// Checks "Authorization: Basic" credentials against basic_auth_users.
// Successful checks are cached (bounded), keyed by a digest of user, hash and
// password, because a scrape every few seconds must not pay for bcrypt each
// time; failures are not cached, so guessing stays slow. Thread-safe.
class BasicAuthenticator {
 public:
  explicit BasicAuthenticator(std::map<std::string, std::string> users);
  bool check(std::string_view user, std::string_view password);
  // Decodes an Authorization header value and checks it; false when malformed.
  bool check_header(std::string_view authorization);

 private:
  std::map<std::string, std::string> users_;
  std::mutex mutex_;
  std::unordered_set<std::string> cache_;  // digests of accepted credentials
};

// RFC 4648 base64 (padding optional); nullopt on any invalid character.
std::optional<std::string> base64_decode(std::string_view text);
// RFC 4648 base64, padded: a client's own Authorization header (check-node).
std::string base64_encode(std::string_view bytes);

}  // namespace ibfx
