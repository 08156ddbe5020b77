// One /proc/PID/stat or /proc/PID/task/TID/stat line (proc(5)), for the
// benchmarks' CPU accounting of processes and threads.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace ibfx::bench {

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

// The resident set now, in KiB (/proc/self/statm's second field): what a
// structure built between two readings added, which the peak cannot tell.
inline long rss_kb() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

}  // namespace ibfx::bench
