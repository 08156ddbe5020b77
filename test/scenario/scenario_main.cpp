// ibfx-scenario: plays a traffic scenario (test/scenarios/*.yaml) into an
// ibsim console, paced in wall time. See test/scenario/scenario.h for the
// model and test/scenarios/README.md for the file format and the demo.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test/scenario/scenario.h"
#include "test/sim/cli_args.h"

namespace {

constexpr const char* kUsage =
    "usage: ibfx-scenario --scenario FILE [--console PATH|-] [--speed X] [--once-dump N]\n"
    "                     [--print-netfile PATH|-] [--culprits]\n"
    "\n"
    "Plays a traffic scenario into ibsim's console: per tick, the PerformanceSet /\n"
    "Unlink / ReLink lines that animate the fabric's port counters.\n"
    "  --scenario FILE        scenario YAML (test/scenarios/*.yaml)\n"
    "  --console PATH         ibsim's console FIFO (its stdin), or - for stdout;\n"
    "                         paced in wall time until the scenario ends or SIGINT/SIGTERM\n"
    "  --speed X              play X times faster than the scenario's time_scale\n"
    "  --once-dump N          write the first N ticks at once, unpaced, and exit\n"
    "                         (to --console, default stdout)\n"
    "  --print-netfile PATH   write the scenario's fabric as an ibsim net file (- for\n"
    "                         stdout); alone, exits after writing it\n"
    "  --culprits             print the ground-truth culprit ports and congestion trees\n"
    "                         (root and victims) on stderr\n"
    "Exit status: 0 done, 1 the console failed, 2 bad arguments or scenario.\n";

using ibfx::test::UsageError;

// Writing to the console failed (ibsim went away): exit status 1, not 2.
struct ConsoleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string scenario;
  std::optional<std::string> console;
  std::optional<std::string> netfile;
  double speed = 1;
  std::optional<long long> once_dump;
  bool culprits = false;
};

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

Options parse_args(int argc, char** argv) {
  Options options;
  ibfx::test::ArgReader args(argc, argv);
  while (args.next()) {
    if (args.is("--scenario")) {
      options.scenario = args.value();
    } else if (args.is("--console")) {
      options.console = args.value();
    } else if (args.is("--print-netfile")) {
      options.netfile = args.value();
    } else if (args.is("--speed")) {
      options.speed = args.positive_number();
    } else if (args.is("--once-dump")) {
      options.once_dump = args.integer(1, std::numeric_limits<long long>::max());
    } else if (args.is("--culprits")) {
      args.no_value();
      options.culprits = true;
    } else if (args.is("--help") || args.is("-h")) {
      std::cout << kUsage;
      std::exit(0);
    } else {
      args.unknown();
    }
  }
  if (options.scenario.empty()) throw UsageError("--scenario is required");
  if (!options.console && !options.netfile && !options.once_dump && !options.culprits) {
    throw UsageError("nothing to do: give --console, --once-dump, --print-netfile or --culprits");
  }
  return options;
}

// Writes whole lines in chunks of at most PIPE_BUF bytes: each write to a
// FIFO is then atomic, so a line never interleaves with one typed by hand
// (or another writer) into the same console.
class ConsoleWriter {
 public:
  explicit ConsoleWriter(const std::string& path) {
    if (path == "-") {
      fd_ = STDOUT_FILENO;
      return;
    }
    // Blocks until ibsim (the reader) has the FIFO open; a signal ends the wait.
    do {
      fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    } while (fd_ < 0 && errno == EINTR && !g_stop);
    if (fd_ < 0 && !g_stop) {
      // A path that cannot be opened is a bad argument (exit 2), unlike a
      // console that fails while we write to it.
      throw std::invalid_argument("--console: cannot open " + path + ": " + std::strerror(errno));
    }
    owned_ = fd_ >= 0;
  }
  ~ConsoleWriter() {
    if (owned_) ::close(fd_);
  }
  ConsoleWriter(const ConsoleWriter&) = delete;
  ConsoleWriter& operator=(const ConsoleWriter&) = delete;

  bool open() const { return fd_ >= 0; }

  void write_lines(const std::vector<std::string>& lines) {
    std::string chunk;
    for (const std::string& line : lines) {
      if (!chunk.empty() && chunk.size() + line.size() + 1 > PIPE_BUF) flush(chunk);
      chunk += line;
      chunk += '\n';
    }
    flush(chunk);
  }

 private:
  void flush(std::string& chunk) {
    std::size_t done = 0;
    while (done < chunk.size()) {
      const ssize_t n = ::write(fd_, chunk.data() + done, chunk.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw ConsoleError(std::string("console write failed: ") + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
    chunk.clear();
  }

  int fd_ = -1;
  bool owned_ = false;
};

void print_culprits(const ibfx::test::ScenarioDriver& driver) {
  for (const ibfx::test::Culprit& c : driver.expected_culprits()) {
    std::cerr << "culprit: " << ibfx::test::to_string(c.type) << " \"" << c.node << "\"[" << c.port
              << "] " << c.counter << " " << c.value << " from " << c.start << " s to " << c.end
              << " s\n";
  }
  for (const ibfx::test::CongestionTree& t : driver.congestion_trees()) {
    std::cerr << "congestion tree: " << t.cause << " rooted at \"" << t.root.node << "\"["
              << t.root.port << "] from " << t.start << " s to " << t.end << " s, "
              << t.victims.size() << " victims:";
    for (const ibfx::test::PortName& v : t.victims) {
      std::cerr << " \"" << v.node << "\"[" << v.port << "]";
    }
    std::cerr << "\n";
  }
}

int run(const Options& options) {
  ibfx::test::ScenarioDriver driver(ibfx::test::load_scenario(options.scenario));
  const ibfx::test::Scenario& scenario = driver.scenario();

  if (options.netfile) {
    if (*options.netfile == "-") {
      std::cout << driver.fabric().to_netfile() << std::flush;
    } else {
      driver.fabric().write_netfile(*options.netfile);
    }
  }
  if (options.culprits) print_culprits(driver);
  if (!options.console && !options.once_dump) return 0;

  ConsoleWriter console(options.console.value_or("-"));
  if (!console.open()) return 0;  // stopped while waiting for a reader

  if (options.once_dump) {
    for (long long i = 0; i < *options.once_dump && !driver.done(); ++i) {
      console.write_lines(driver.step());
    }
    return 0;
  }

  const double wall_per_tick = scenario.tick / (scenario.time_scale * options.speed);
  std::cerr << "ibfx-scenario: " << (scenario.name.empty() ? scenario.path : scenario.name) << ": "
            << driver.fabric().nodes().size() << " nodes, " << scenario.duration
            << " s simulated, a tick every " << wall_per_tick << " s\n";
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  while (!driver.done() && !g_stop) {
    // A tick's counters describe the end of its interval: push them then.
    const auto due =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                    wall_per_tick * static_cast<double>(driver.ticks() + 1)));
    // Short sleeps so a signal stops the run promptly.
    while (!g_stop && Clock::now() < due) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(due - Clock::now(), std::chrono::milliseconds(100)));
    }
    if (g_stop) break;
    console.write_lines(driver.step());
  }
  // Never leave a flapped link down behind us.
  console.write_lines(driver.cleanup());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  struct sigaction action {};
  action.sa_handler = on_signal;  // no SA_RESTART: a blocking open() returns EINTR
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A closed console is reported by write() (EPIPE), not by killing us.
  signal(SIGPIPE, SIG_IGN);

  Options options;
  try {
    options = parse_args(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "ibfx-scenario: " << e.what() << "\n\n" << kUsage;
    return 2;
  }
  try {
    return run(options);
  } catch (const ConsoleError& e) {
    std::cerr << "ibfx-scenario: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {  // bad scenario ("file:line: key: what"), bad path
    std::cerr << "ibfx-scenario: " << e.what() << "\n";
    return 2;
  }
}
