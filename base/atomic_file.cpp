#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ibfx {
namespace {

std::string failure(std::string_view step, const std::string& path, int err) {
  return std::string(step) + " " + path + ": " + std::strerror(err);
}

// The directory part of `path` ("." for a bare name), for its fsync.
std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

bool write_file_atomically(const std::string& path, std::string_view contents, std::string& error) {
  const std::string tmp = path + ".tmp";
  // O_TRUNC: a temporary file left by a crash is simply overwritten.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = failure("open", tmp, errno);
    return false;
  }
  auto give_up = [&](std::string_view step, int err) {
    error = failure(step, tmp, err);
    ::close(fd);
    ::unlink(tmp.c_str());
    return false;
  };
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    // A full disk shows as ENOSPC here (or EFBIG past RLIMIT_FSIZE, with
    // SIGXFSZ ignored); a short write is retried and then gives the error.
    if (n < 0) return give_up("write", errno);
    if (n == 0) return give_up("write", EIO);
    done += static_cast<std::size_t>(n);
  }
  // Delayed allocation can report ENOSPC only here.
  if (::fsync(fd) != 0) return give_up("fsync", errno);
  if (::close(fd) != 0) {
    error = failure("close", tmp, errno);
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = failure("rename", tmp, errno);
    ::unlink(tmp.c_str());
    return false;
  }
  // The rename is done; without this fsync a power cut could still undo it.
  // The new contents are in place for every reader either way, and nothing
  // could be done about a failure here, so it does not fail the write.
  const std::string dir = directory_of(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

bool read_whole_file(const std::string& path, std::string& contents, std::string& error,
                     bool& missing) {
  missing = false;
  contents.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    missing = errno == ENOENT;
    error = failure("open", path, errno);
    return false;
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = failure("read", path, errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    contents.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

}  // namespace ibfx
