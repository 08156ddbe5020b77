#include "daemon/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// A receiving end like systemd's: a bound unix datagram socket, with a receive
// timeout so a missing message fails the test instead of hanging it.
class Receiver {
 public:
  // name starting with '@': abstract namespace; otherwise a filesystem path.
  explicit Receiver(std::string name) : name_(std::move(name)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(name_.size() < sizeof(addr.sun_path));
    std::memcpy(addr.sun_path, name_.data(), name_.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size());
    if (name_[0] == '@') {
      addr.sun_path[0] = '\0';
    } else {
      ::unlink(name_.c_str());
      len += 1;
    }
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), len) == 0);
    timeval tv{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setenv("NOTIFY_SOCKET", name_.c_str(), 1);
  }
  ~Receiver() {
    ::unsetenv("NOTIFY_SOCKET");
    ::close(fd_);
    if (name_[0] != '@') ::unlink(name_.c_str());
  }
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  std::string receive() {
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n < 0 ? std::string("<nothing>") : std::string(buf, static_cast<std::size_t>(n));
  }

 private:
  std::string name_;
  int fd_ = -1;
};

std::string unique_name(const char* tag) {
  return std::string(tag) + "ibfx-notify-" + std::to_string(::getpid());
}

}  // namespace

TEST_CASE("sd_notify messages reach a filesystem socket", "[systemd]") {
  Receiver rx("/tmp/" + unique_name(""));
  ibfx::notify_ready();
  CHECK(rx.receive() == "READY=1");
  ibfx::notify_status("swept 42 ports in 12 ms\nsecond line");
  CHECK(rx.receive() == "STATUS=swept 42 ports in 12 ms second line");
  ibfx::notify_watchdog();
  CHECK(rx.receive() == "WATCHDOG=1");
  ibfx::notify_stopping();
  CHECK(rx.receive() == "STOPPING=1");
  ibfx::notify_reloading();
  const std::string reloading = rx.receive();
  CHECK(reloading.rfind("RELOADING=1\nMONOTONIC_USEC=", 0) == 0);
  CHECK(reloading.size() > std::strlen("RELOADING=1\nMONOTONIC_USEC="));
}

TEST_CASE("sd_notify handles the abstract namespace", "[systemd]") {
  Receiver rx(unique_name("@"));
  CHECK(ibfx::notify_raw("READY=1\nSTATUS=abstract"));
  CHECK(rx.receive() == "READY=1\nSTATUS=abstract");
}

TEST_CASE("sd_notify is a no-op without NOTIFY_SOCKET or with a bad one", "[systemd]") {
  ::unsetenv("NOTIFY_SOCKET");
  CHECK_FALSE(ibfx::notify_raw("READY=1"));
  ibfx::notify_ready();  // must not throw or crash
  ::setenv("NOTIFY_SOCKET", "relative/path", 1);
  CHECK_FALSE(ibfx::notify_raw("READY=1"));
  ::setenv("NOTIFY_SOCKET", "/nonexistent/ibfx-notify.sock", 1);
  CHECK_FALSE(ibfx::notify_raw("READY=1"));
  ::setenv("NOTIFY_SOCKET", ("/" + std::string(200, 'x')).c_str(), 1);
  CHECK_FALSE(ibfx::notify_raw("READY=1"));
  ::unsetenv("NOTIFY_SOCKET");
}

TEST_CASE("watchdog_interval reads WATCHDOG_USEC and WATCHDOG_PID", "[systemd]") {
  ::unsetenv("WATCHDOG_USEC");
  ::unsetenv("WATCHDOG_PID");
  CHECK_FALSE(ibfx::watchdog_interval());
  ::setenv("WATCHDOG_USEC", "30000000", 1);
  REQUIRE(ibfx::watchdog_interval());
  CHECK(ibfx::watchdog_interval()->count() == 30000000);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  CHECK(ibfx::watchdog_interval());
  ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);
  CHECK_FALSE(ibfx::watchdog_interval());  // meant for another process
  ::unsetenv("WATCHDOG_PID");
  ::setenv("WATCHDOG_USEC", "0", 1);
  CHECK_FALSE(ibfx::watchdog_interval());
  ::setenv("WATCHDOG_USEC", "12abc", 1);
  CHECK_FALSE(ibfx::watchdog_interval());
  ::unsetenv("WATCHDOG_USEC");
}
