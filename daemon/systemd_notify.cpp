#include "daemon/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace ibfx {
namespace {

// Closes the socket on every path out of notify_raw().
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::optional<unsigned long long> parse_unsigned(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  const char* end = text + std::strlen(text);
  unsigned long long value = 0;
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

bool notify_raw(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  // Only absolute paths and abstract names ('@' stands for the leading NUL)
  // are valid; anything else is not a socket systemd gave us.
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path, len);
  if (path[0] == '@') addr.sun_path[0] = '\0';
  // An abstract name is exactly `len` bytes long, with no terminating NUL.
  const auto addr_len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len + (path[0] == '@' ? 0 : 1));

  const Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return false;
  ssize_t sent = 0;
  do {
    // MSG_NOSIGNAL: a vanished receiver must not raise SIGPIPE.
    sent = ::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL,
                    reinterpret_cast<const sockaddr*>(&addr), addr_len);
  } while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(state.size());
}

void notify_ready() { notify_raw("READY=1"); }

void notify_status(std::string_view text) {
  std::string message = "STATUS=";
  for (char c : text) message += (c == '\n' || c == '\r') ? ' ' : c;
  notify_raw(message);
}

void notify_watchdog() { notify_raw("WATCHDOG=1"); }

void notify_reloading() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const long long usec = static_cast<long long>(now.tv_sec) * 1000000LL + now.tv_nsec / 1000;
  notify_raw("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void notify_stopping() { notify_raw("STOPPING=1"); }

std::optional<std::chrono::microseconds> watchdog_interval() {
  const auto usec = parse_unsigned(std::getenv("WATCHDOG_USEC"));
  if (!usec || *usec == 0) return std::nullopt;
  // WATCHDOG_PID names the process the watchdog is meant for; a child that
  // inherited the environment must not think it is being watched.
  if (const char* pid_text = std::getenv("WATCHDOG_PID"); pid_text != nullptr) {
    const auto pid = parse_unsigned(pid_text);
    if (!pid || *pid != static_cast<unsigned long long>(::getpid())) return std::nullopt;
  }
  return std::chrono::microseconds(static_cast<std::chrono::microseconds::rep>(*usec));
}

}  // namespace ibfx
