// What the code under test logs (base/log.h writes to stderr): fd 2 goes to
// a temporary file while the capture lives, and back when it ends, even
// when the test fails.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ibfx::test {

class StderrCapture {
 public:
  StderrCapture() {
    char tmpl[] = "/tmp/ibfx-stderr-XXXXXX";
    file_ = ::mkstemp(tmpl);
    REQUIRE(file_ >= 0);
    ::unlink(tmpl);
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    REQUIRE(saved_ >= 0);
    REQUIRE(::dup2(file_, STDERR_FILENO) == STDERR_FILENO);
  }
  ~StderrCapture() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    ::close(file_);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  // Everything written to stderr so far.
  std::string text() const {
    std::fflush(stderr);
    std::string out;
    char buf[4096];
    for (off_t at = 0;;) {
      const ssize_t n = ::pread(file_, buf, sizeof buf, at);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
      at += n;
    }
    return out;
  }

 private:
  int file_ = -1;
  int saved_ = -1;
};

}  // namespace ibfx::test
