// The daemon's helper processes (the MAD worker, a discovery) are the daemon
// binary re-executed with a mode flag; `squeue --json` is another program.
// What both sides of that share: the spawn, the one way a child's output is
// read to its end (deadline, byte cap, kill, reap), the flags every child
// takes, a child's set-up, and how an exit is described in a log line.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ibfx {

// Forks and execs args[0] with `args`. `fds` are placed at descriptors 3, 4,
// ... in order; everything above them is closed (not the listener, not
// anything else of the daemon's), the signal mask is cleared, and the child
// is killed when the thread that forked it ends (PR_SET_PDEATHSIG), so no
// helper outlives the daemon. With `stdout_to_stderr`, whatever a library
// in the child prints cannot land in the daemon's stdout (--once output).
// A `stdout_fd` >= 0 becomes the child's stdout instead (a pipe the
// daemon reads, e.g. `squeue --json`). At most 7 `fds`.
// Returns the pid, or -1 with errno set when fork() failed; a failed exec
// shows as exit status 127.
pid_t spawn_child(const std::vector<std::string>& args, const std::vector<int>& fds,
                  bool stdout_to_stderr, int stdout_fd = -1);

// How far a child's output was read (read_child_output()).
struct ChildOutput {
  enum class Cut : std::uint8_t { kNo, kTimeout, kTooLarge };
  Cut cut = Cut::kNo;  // kNo: read to EOF and the child reaped
  std::string output;  // what it wrote, complete only when cut is kNo
  int status = 0;      // its waitpid() status (killed, when cut short)
};

struct ChildOutputLimits {
  std::chrono::steady_clock::time_point deadline;
  std::size_t max_bytes = 0;  // more than this is cut
  // Called between reads, at least every 100 ms while the child is quiet
  // (progress lines for a long discovery); may be empty.
  std::function<void()> waiting;
};

// Reads the read end `fd` of a child's pipe to EOF and reaps the child
// `pid`. Past the deadline or past max_bytes the child is killed (SIGKILL)
// and reaped; one that closed its end but does not exit is held to the
// same deadline. Closes `fd`. The one place a child's output is collected,
// so that every child gets the same bounds.
ChildOutput read_child_output(pid_t pid, int fd, const ChildOutputLimits& limits);

// "exited with status N", "was killed by signal N".
std::string describe_status(int status);

// The flags every child takes: --ca=NAME --ca-port=N --log.level=LEVEL
// --log.format=FORMAT.
struct ChildFlags {
  std::string ca;
  int ca_port = 0;
  std::string log_level = "info";
  std::string log_format = "logfmt";
};
// Reads argv[2...] (argv[1] is the mode flag); hands every other flag to
// `other`.
ChildFlags parse_child_flags(int argc, char** argv,
                             const std::function<void(std::string_view)>& other = {});
// The other side of parse_child_flags, so that every child's command line is
// built in one place: `exe`, the mode flag, --ca and --ca-port, the mode's
// own flags, then --log.level and --log.format.
std::vector<std::string> child_args(const std::string& exe, std::string_view mode,
                                    const ChildFlags& flags,
                                    const std::vector<std::string>& mode_flags = {});

// A child's first steps: the parent ends it (EOF on its channels, SIGKILL,
// PR_SET_PDEATHSIG), so signals meant for the daemon's process group or
// cgroup are ignored rather than turned into a failure the daemon logs;
// SIGPIPE becomes an error return. Applies the log level and format (the
// child writes to the daemon's stderr, so its lines look like the daemon's).
void become_child(const ChildFlags& flags);

// A child's writes to its channels (a pipe or a socket): all of `data`, or
// false once the parent is gone (after become_child, EPIPE rather than
// SIGPIPE).
bool write_all(int fd, std::string_view data);

}  // namespace ibfx
