#include "base/thread_name.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <thread>

namespace {
// What `top -H` and `ps -T` show: the kernel's comm of the calling thread.
std::string kernel_comm() {
  std::ifstream in("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}
}  // namespace

TEST_CASE("set_thread_name names the calling thread only, as the kernel shows it", "[thread]") {
  const std::string main_before = ibfx::thread_name();
  std::string seen, comm;
  std::thread t([&] {
    ibfx::set_thread_name("ibfx-sweep");
    seen = ibfx::thread_name();
    comm = kernel_comm();
  });
  t.join();
  CHECK(seen == "ibfx-sweep");
  CHECK(comm == "ibfx-sweep");
  CHECK(ibfx::thread_name() == main_before);
}

TEST_CASE("a thread name over 15 characters is cut, not refused", "[thread]") {
  std::string seen;
  std::thread t([&] {
    ibfx::set_thread_name("ibfx-a-very-long-thread-name");
    seen = ibfx::thread_name();
  });
  t.join();
  CHECK(seen == std::string("ibfx-a-very-long-thread-name").substr(0, ibfx::kMaxThreadName));
  CHECK(seen.size() == 15);
}
