#include "config/text_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>

#include "config/config_error.h"

namespace ibfx {

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  const auto cannot_read = [&](const std::string& why) {
    return ConfigError(path + ": cannot read: " + why);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw cannot_read(std::generic_category().message(errno));
  std::string data;
  std::array<char, std::size_t{64} * 1024> buf{};
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || data.size() + static_cast<std::size_t>(n) > max_bytes) {
      const int err = errno;
      ::close(fd);
      if (n == 0) return data;
      if (n < 0) throw cannot_read(std::generic_category().message(err));
      throw cannot_read("larger than " + std::to_string(max_bytes) + " bytes");
    }
    data.append(buf.data(), static_cast<std::size_t>(n));
  }
}

}  // namespace ibfx
