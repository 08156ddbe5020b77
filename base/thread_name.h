// Names the calling thread, so that `top -H`, `ps -T`, perf and
// /proc/PID/task/TID/comm tell the daemon's threads apart (the sweep, the
// publisher's render, discovery), and a benchmark can charge CPU to each.
#pragma once

#include <cstddef>
#include <string>

namespace ibfx {

// Linux keeps at most 15 characters of a thread's name: longer names are cut.
inline constexpr std::size_t kMaxThreadName = 15;

void set_thread_name(const std::string& name);
// The calling thread's name as the kernel holds it.
std::string thread_name();

}  // namespace ibfx
