// RFC 4648 base64 with padding, written independently of the daemon's
// decoder (http/basic_auth.h, OpenSSL's) so tests can build Authorization
// headers and check that decoder against it.
#pragma once

#include <string>

namespace ibfx::test {

inline std::string base64(const std::string& in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned int buffer = 0;
  int bits = 0;
  for (const unsigned char c : in) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(buffer >> bits) & 0x3F];
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (6 - bits)) & 0x3F];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

}  // namespace ibfx::test
