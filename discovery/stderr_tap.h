// Counts what libibnetdisc reports on stderr while a discovery runs.
//
// libibnetdisc has no API for the SMPs it lost: each one that got no answer
// after its retries is only a line on stderr,
//   ibnd_discover_fabric: ... umad (DR path slid 0; dlid 0; 0,1,3 Attr 0x11:0)
//   bad status 110; Connection timed out
// and whatever lies behind that SMP is silently missing from the fabric it
// returns. The discovery child (--discover-once) runs it under this tap: the
// lines are counted (timeouts apart from other errors) so that the daemon
// can tell a partial discovery from a complete one, and only the first few
// are passed on, so that a lossy fabric does not flood the log with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

namespace ibfx {

struct StderrCounts {
  std::uint32_t smp_timeouts = 0;  // "bad status 110" (ETIMEDOUT)
  std::uint32_t smp_errors = 0;    // any other "bad status"
  std::uint32_t lines = 0;         // every line written meanwhile
  std::uint32_t suppressed = 0;    // lines not passed on
};

class StderrTap {
 public:
  // Redirects descriptor 2 into the tap; up to `pass_on` lines still reach
  // the original stderr. If the redirection cannot be set up, nothing is
  // tapped and the counts stay zero (active() is false).
  explicit StderrTap(std::size_t pass_on = 5);
  ~StderrTap();
  StderrTap(const StderrTap&) = delete;
  StderrTap& operator=(const StderrTap&) = delete;

  bool active() const { return saved_fd_ >= 0; }
  // Restores descriptor 2 and returns the counts. Idempotent.
  StderrCounts stop();

  // How one line counts (exposed for tests).
  static void classify(const std::string& line, StderrCounts& counts);

 private:
  void read_loop();

  std::size_t pass_on_;
  int saved_fd_ = -1;
  int read_fd_ = -1;
  std::thread reader_;
  StderrCounts counts_;
};

}  // namespace ibfx
