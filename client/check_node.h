// `ibfabric_exporter check-node`: Slurm's HealthCheckProgram (and NHC-style
// use) over the daemon's /nodes/<host> (issue #43, docs/nodes.md). It asks
// the daemon for its own node's fabric health and acts as Slurm sites
// expect: nothing when healthy; drain with the daemon's reason when
// unhealthy; resume a node only when its drain reason is one this check
// set (kNodeReasonPrefix), never one an administrator set; and when the
// daemon cannot tell (unreachable, stale, unknown host, garbage), nothing
// but a line on stderr (fail-open), unless --fail-closed. Bounded by one
// deadline (--timeout) over the GET and every scontrol; scontrol is
// exec'd with its arguments, never through a shell.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_get.h"

namespace ibfx {

// Exit statuses (Slurm ignores them; NHC-style wrappers and people read them).
inline constexpr int kCheckHealthy = 0;    // healthy, or a fabric incident: nothing to do
inline constexpr int kCheckUnhealthy = 1;  // drained (or, --dry-run, would be)
inline constexpr int kCheckUnknown = 2;    // the daemon could not tell; fail-open: nothing done
inline constexpr int kCheckFailed = 3;     // scontrol failed
inline constexpr int kCheckUsage = 64;     // bad arguments (EX_USAGE)

struct CheckNodeOptions {
  std::string host;                           // the Slurm node name; empty: this host's name
  std::string url = "http://localhost:9690";  // the daemon: http(s)://host:port
  std::chrono::milliseconds timeout{10000};   // the whole check
  bool dry_run = false;
  bool fail_closed = false;   // unknown drains ("ibfx: fabric health unknown")
  std::string user;           // basic auth (the daemon's web config)
  std::string password_file;  // its password, first line
  std::string ca_file;        // https: the CA the daemon's certificate chains to
  std::string scontrol = "/usr/bin/scontrol";
};

// Shared by the client modes (check-node, job-receipt):
// An error text from the network or a child, for one stderr line:
// printable ASCII, at most 200 bytes.
std::string one_line(std::string_view text);
// http://host:port or https://host:port, nothing after the port.
bool valid_url(std::string_view url);
// Text for an scontrol argument (a reason, a comment): printable ASCII
// without quotes, backslashes, '$' or '`' (they become '?').
std::string slurm_safe_text(std::string_view text);
// The options every client mode shares: --url (valid_url), --user with
// --password-file, --scontrol an absolute path; false with `error`.
bool check_client_options(const std::string& url, const std::string& user,
                          const std::string& password_file, const std::string& scontrol,
                          std::string& error);
// Basic auth from `password_file`'s first line (nothing when `user` is
// empty); false with `error` when the file cannot be read.
bool add_basic_auth(HttpGetRequest& request, const std::string& user,
                    const std::string& password_file, std::string& error);

// Parses argv[2...] (argv[1] is "check-node"); nullopt with `error` set.
std::optional<CheckNodeOptions> parse_check_node_args(int argc, char** argv, std::string& error);

// What the daemon said of the host.
struct NodeAnswer {
  std::string verdict;  // "healthy", "unhealthy", "fabric incident" or "unknown"
  std::string reason;   // unhealthy: made safe (check_node_reason); unknown: why
};
NodeAnswer read_node_answer(const HttpGetResult& got);

// A reason from the daemon made fit for `scontrol ... reason=`: printable
// ASCII without quotes, backslashes, '$' or '`' (they become '?'), the
// prefix first, at most kNodeReasonMax bytes. The daemon sends one already;
// the check does not trust the wire.
std::string check_node_reason(std::string_view reason);

// The node as Slurm has it (`scontrol -o show node <host>`).
struct SlurmNodeState {
  bool found = false;
  bool drained = false;  // DRAIN flag (draining or drained)
  std::string state;     // e.g. "IDLE+DRAIN"
  std::string reason;    // without Slurm's " [user@time]" suffix
};
SlurmNodeState parse_scontrol_node(std::string_view oneliner);

enum class CheckAction : std::uint8_t { kNothing, kDrain, kResume };
struct CheckDecision {
  CheckAction action = CheckAction::kNothing;
  std::string reason;   // kDrain: the drain reason
  std::string message;  // for stderr (kNothing) or stdout (an action)
  int exit_code = kCheckHealthy;
};
// The whole policy, pure: what the daemon said and what Slurm has.
CheckDecision decide_check(std::string_view host, const NodeAnswer& answer,
                           const SlurmNodeState& node, bool fail_closed);

// A child's run: its stdout, whether it exited 0, and why not.
struct CommandResult {
  bool ok = false;
  std::string out;
  std::string error;
};
using CommandRunner = std::function<CommandResult(const std::vector<std::string>& argv,
                                                  std::chrono::steady_clock::time_point deadline)>;
// fork/exec (base/child_process.h), stdout read within the deadline.
CommandResult run_command(const std::vector<std::string>& argv,
                          std::chrono::steady_clock::time_point deadline);

// The mode: returns the exit status. `get` and `run` are the network and
// the processes (tests pass fakes).
int run_check_node(const CheckNodeOptions& options,
                   const std::function<HttpGetResult(const HttpGetRequest&)>& get,
                   const CommandRunner& run);
// main(): argv[1] == "check-node".
bool is_check_node_invocation(int argc, char** argv);
int check_node_main(int argc, char** argv);

}  // namespace ibfx
