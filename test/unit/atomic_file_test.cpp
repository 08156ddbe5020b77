#include "base/atomic_file.h"

#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <string>

#include "test/support/temp_dir.h"

namespace {

std::string contents_of(const std::string& path) {
  std::string text, error;
  bool missing = false;
  REQUIRE(ibfx::read_whole_file(path, text, error, missing));
  return text;
}

// RLIMIT_FSIZE for the scope (the test process's own), with SIGXFSZ ignored so
// that a write past it fails with EFBIG instead of killing the process: the
// same failure as a full file system, at the same step.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved_) == 0);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = saved_;
    limited.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace

TEST_CASE("write_file_atomically creates and replaces a file, leaving no temporary",
          "[atomic_file]") {
  ibfx::test::TempDir dir;
  const std::string path = dir.path() + "/state.json";
  std::string error;
  REQUIRE(ibfx::write_file_atomically(path, "first", error));
  CHECK(contents_of(path) == "first");
  REQUIRE(ibfx::write_file_atomically(path, "second, longer", error));
  CHECK(contents_of(path) == "second, longer");
  REQUIRE(ibfx::write_file_atomically(path, "", error));
  CHECK(contents_of(path).empty());
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("a temporary file left by a crash is overwritten, not appended to", "[atomic_file]") {
  ibfx::test::TempDir dir;
  const std::string path = dir.write("state.json", "old");
  dir.write("state.json.tmp", "half-written garbage from before the crash");
  std::string error;
  REQUIRE(ibfx::write_file_atomically(path, "new", error));
  CHECK(contents_of(path) == "new");
}

TEST_CASE("a full disk fails the write, says why and keeps the old file intact", "[atomic_file]") {
  ibfx::test::TempDir dir;
  const std::string path = dir.write("state.json", "the old contents");
  const std::string big(1 << 20, 'x');
  std::string error;
  bool ok = true;
  {
    const FileSizeLimit limit(4096);
    ok = ibfx::write_file_atomically(path, big, error);
  }
  CHECK_FALSE(ok);
  CHECK(error.find("write " + path + ".tmp") == 0);
  CHECK(error.find("too large") != std::string::npos);  // EFBIG's strerror
  CHECK(contents_of(path) == "the old contents");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("an unwritable place fails the write with the reason, nothing created", "[atomic_file]") {
  ibfx::test::TempDir dir;
  // A "directory" that is a regular file: ENOTDIR, which even root gets
  // (permissions do not stop root; this does).
  const std::string not_a_dir = dir.write("plain-file", "x");
  std::string error;
  CHECK_FALSE(ibfx::write_file_atomically(not_a_dir + "/state.json", "x", error));
  CHECK(error == "open " + not_a_dir + "/state.json.tmp: Not a directory");
  CHECK_FALSE(ibfx::write_file_atomically(dir.path() + "/missing/state.json", "x", error));
  CHECK(error.find("No such file or directory") != std::string::npos);
}

TEST_CASE("read_whole_file tells a missing file from an unreadable one", "[atomic_file]") {
  ibfx::test::TempDir dir;
  std::string text, error;
  bool missing = false;
  CHECK_FALSE(ibfx::read_whole_file(dir.path() + "/none", text, error, missing));
  CHECK(missing);
  CHECK_FALSE(ibfx::read_whole_file(dir.path(), text, error, missing));  // a directory: EISDIR
  CHECK_FALSE(missing);
  CHECK(error.find("Is a directory") != std::string::npos);
  const std::string big(200000, 'y');
  REQUIRE(ibfx::write_file_atomically(dir.path() + "/big", big, error));
  CHECK(contents_of(dir.path() + "/big") == big);
}
