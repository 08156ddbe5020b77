// Small helpers for integration tests that drive command-line tools (curl,
// openssl) and need bcrypt hashes for basic_auth_users.
#pragma once

#include <crypt.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace ibfx::test {

struct Shell {
  int exit_code = -1;
  std::string out;
};

// Runs a /bin/sh command line, capturing stdout.
inline Shell shell(const std::string& command) {
  Shell result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) result.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

// bcrypt at the minimum cost (4), so the test spends no time hashing.
inline std::string bcrypt_hash(const std::string& password) {
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
  crypt_data data{};
  if (crypt_gensalt_rn("$2y$", 4, nullptr, 0, salt.data(), static_cast<int>(salt.size())) ==
      nullptr) {
    throw std::runtime_error("crypt_gensalt_rn failed");
  }
  const char* hash = crypt_rn(password.c_str(), salt.data(), &data, sizeof(data));
  if (hash == nullptr || hash[0] == '*') throw std::runtime_error("crypt_rn failed");
  return hash;
}

}  // namespace ibfx::test
