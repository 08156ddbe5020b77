#include "http/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>
#include <cctype>
#include <cstring>
#include <memory>

namespace ibfx {
namespace {

// Accepted credentials remembered at once; a handful of scrapers need a few
// entries, and the bound keeps a flood of distinct valid logins from growing
// memory without limit.
constexpr std::size_t kMaxCachedCredentials = 256;

constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool is_basic_scheme(std::string_view scheme) {
  constexpr std::string_view kBasic = "basic";
  if (scheme.size() != kBasic.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(scheme[i])) != kBasic[i]) return false;
  }
  return true;
}

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

bool is_bcrypt_hash(const std::string& hash) {
  return hash.size() == 60 &&
         (hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$"));
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
  if (space == std::string_view::npos || !is_basic_scheme(authorization.substr(0, space))) {
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
  // EVP_DecodeBlock wants whole 4-character groups; browsers and curl pad,
  // some clients do not, so strip the padding and put it back.
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;  // a single dangling character
  // EVP_DecodeBlock skips leading and trailing whitespace and stops at the
  // first NUL; the header's value is ours to trim, and neither belongs inside.
  if (text.find_first_not_of(kBase64Alphabet) != std::string_view::npos) return std::nullopt;
  std::string padded(text);
  const std::size_t padding = (4 - padded.size() % 4) % 4;
  padded.append(padding, '=');
  std::string out(padded.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(padded.data()),
                                static_cast<int>(padded.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the bytes the padding stands for as zeros.
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace ibfx
