// What the benchmarks measure with, each once: the wall clock, CPU time
// (of this process, of this thread, of another process or thread from its
// /proc/PID/stat line, proc(5)) and the resident set (now and at peak).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace ibfx::bench {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// CPU seconds of this process (every thread): on a loaded machine wall time
// measures the neighbours as much as the code.
inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// CPU seconds of the calling thread alone.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct ProcStat {
  bool ok = false;   // the file was there and parsed
  std::string comm;  // field 2, without its parentheses (a thread's name)
  pid_t ppid = 0;    // field 4
  double cpu = 0;    // utime + stime (fields 14 and 15), in seconds
};

inline ProcStat read_proc_stat(const std::string& path) {
  std::ifstream in(path);
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ProcStat out;
  // comm may hold spaces and parentheses: it ends at the last ')'.
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 > stat.size()) {
    return out;
  }
  out.comm = stat.substr(open + 1, close - open - 1);
  std::istringstream fields(stat.substr(close + 2));  // from field 3 (state)
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 4) out.ppid = static_cast<pid_t>(std::stol(field));
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  out.cpu = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  out.ok = true;
  return out;
}

// utime + stime of another process, in seconds.
inline double cpu_seconds(pid_t pid) {
  return read_proc_stat("/proc/" + std::to_string(pid) + "/stat").cpu;
}

// The resident set now, in KiB (/proc/self/statm's second field): what a
// structure built between two readings added, which the peak cannot tell.
inline long resident_kib() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// The peak resident set of this process so far, in MiB (ru_maxrss).
inline double peak_resident_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace ibfx::bench
