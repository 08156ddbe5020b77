#include "client/check_node.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/child_process.h"
#include "base/slurm_node.h"
#include "config/config.h"
#include "config/text_file.h"
#include "http/basic_auth.h"

namespace ibfx {
namespace {

// Far more than one host's answer (a few ports), far less than a mistake.
constexpr std::size_t kMaxAnswerBytes = 1 << 20;
constexpr std::size_t kMaxScontrolBytes = 1 << 16;
constexpr std::string_view kUnknownReason = "ibfx: fabric health unknown";

bool starts_with_prefix(std::string_view reason) { return reason.starts_with(kNodeReasonPrefix); }

std::string default_host() {
  // slurmd runs HealthCheckProgram with SLURMD_NODENAME: the node's Slurm
  // name, which is not always the host name (slurmd -N).
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return {};
  std::string host = buf;
  return host.substr(0, host.find('.'));
}

}  // namespace

std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 200)) out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  return out;
}

bool valid_url(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else {
    return false;
  }
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) return false;
  const std::string_view port = rest.substr(colon + 1);
  return port.find_first_not_of("0123456789") == std::string_view::npos && port.size() <= 5 &&
         rest.substr(0, colon).find_first_of("/?#@ ") == std::string_view::npos;
}

std::string slurm_safe_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool bad =
        c < 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '\\' || c == '$' || c == '`';
    out += bad ? '?' : c;
  }
  return out;
}

bool add_basic_auth(HttpGetRequest& request, const std::string& user,
                    const std::string& password_file, std::string& error) {
  if (user.empty()) return true;
  std::string password;
  try {
    password = read_text_file(password_file, 4096);
  } catch (const std::exception& e) {
    error = one_line(e.what());
    return false;
  }
  password = password.substr(0, password.find('\n'));
  request.headers.emplace_back("Authorization", "Basic " + base64_encode(user + ":" + password));
  return true;
}

std::optional<CheckNodeOptions> parse_check_node_args(int argc, char** argv, std::string& error) {
  CheckNodeOptions o;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    std::string value;
    const bool has_value = eq != std::string_view::npos;
    if (has_value) {
      value = std::string(arg.substr(eq + 1));
    } else if (name != "--dry-run" && name != "--fail-closed" && name != "--help" && i + 1 < argc) {
      value = argv[++i];
    }
    if (name == "--dry-run") {
      o.dry_run = true;
    } else if (name == "--fail-closed") {
      o.fail_closed = true;
    } else if (name == "--host") {
      o.host = value;
    } else if (name == "--url") {
      o.url = value;
    } else if (name == "--timeout") {
      try {
        o.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(parse_duration(value));
      } catch (const std::exception& e) {
        error = "--timeout: " + std::string(e.what());
        return std::nullopt;
      }
    } else if (name == "--user") {
      o.user = value;
    } else if (name == "--password-file") {
      o.password_file = value;
    } else if (name == "--ca-file") {
      o.ca_file = value;
    } else if (name == "--scontrol") {
      o.scontrol = value;
    } else {
      error = "unknown argument " + one_line(arg) +
              " (check-node [--host=H] [--url=http(s)://host:port] [--timeout=10s] [--dry-run] "
              "[--fail-closed] [--user=U --password-file=F] [--ca-file=F] [--scontrol=PATH])";
      return std::nullopt;
    }
  }
  if (o.host.empty()) o.host = default_host();
  if (!valid_node_host(o.host)) {
    error = "--host: a Slurm node name is 1 to 255 letters, digits, '.', '-' or '_', got \"" +
            one_line(o.host) + "\"";
    return std::nullopt;
  }
  if (o.timeout < std::chrono::milliseconds(100) || o.timeout > std::chrono::minutes(5)) {
    error = "--timeout: must be between 100ms and 5m";
    return std::nullopt;
  }
  if (!check_client_options(o.url, o.user, o.password_file, o.scontrol, error)) return std::nullopt;
  return o;
}

bool check_client_options(const std::string& url, const std::string& user,
                          const std::string& password_file, const std::string& scontrol,
                          std::string& error) {
  if (!valid_url(url)) {
    error = "--url: expected http://host:port or https://host:port, got \"" + one_line(url) + "\"";
    return false;
  }
  if (user.empty() != password_file.empty()) {
    error = "--user and --password-file go together";
    return false;
  }
  if (scontrol.empty() || scontrol.front() != '/') {
    error = "--scontrol: an absolute path (no PATH search, no shell)";
    return false;
  }
  return true;
}

std::string check_node_reason(std::string_view reason) {
  std::string out = slurm_safe_text(reason);
  if (!starts_with_prefix(out)) out = std::string(kNodeReasonPrefix) + " " + out;
  if (out.size() > kNodeReasonMax) out.resize(kNodeReasonMax);
  return out;
}

NodeAnswer read_node_answer(const HttpGetResult& got) {
  NodeAnswer a{"unknown", ""};
  if (got.outcome == HttpGetResult::Outcome::kTimedOut) {
    a.reason = "no answer from " + one_line(got.where) + " in time";
    return a;
  }
  if (got.outcome != HttpGetResult::Outcome::kAnswered) {
    a.reason = one_line(got.where) + ": " + one_line(got.error);
    return a;
  }
  // 404 is the daemon's "no such host" (with a JSON body); anything else
  // but 200 is not an answer about the host.
  if (got.status != 200 && got.status != 404) {
    a.reason = one_line(got.where) + " answered HTTP " + std::to_string(got.status);
    return a;
  }
  const auto j = nlohmann::json::parse(got.body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("verdict") || !j["verdict"].is_string()) {
    a.reason = one_line(got.where) + " answered something other than a node's health";
    return a;
  }
  const std::string verdict = j["verdict"].get<std::string>();
  const std::string reason =
      j.contains("reason") && j["reason"].is_string() ? j["reason"].get<std::string>() : "";
  if (verdict == "healthy" || verdict == "unhealthy" || verdict == "fabric incident") {
    a.verdict = verdict;
    a.reason = verdict == "healthy" ? "" : check_node_reason(reason);
    if (verdict == "unhealthy" && reason.empty())
      a.reason = std::string(kNodeReasonPrefix) + " unhealthy";
  } else {
    a.reason = reason.empty() ? "the daemon does not know" : one_line(reason);
  }
  return a;
}

SlurmNodeState parse_scontrol_node(std::string_view text) {
  SlurmNodeState s;
  // "NodeName=<n> ... State=IDLE+DRAIN ... Reason=<text> [user@time]":
  // State before Reason, the reason last, to the end of the line (it may
  // hold anything, " State=" too).
  if (!text.starts_with("NodeName=")) return s;
  text = text.substr(0, text.find('\n'));
  s.found = true;
  const std::size_t state = text.find(" State=");
  if (state != std::string_view::npos) {
    const std::string_view rest = text.substr(state + 7);
    s.state = std::string(rest.substr(0, rest.find(' ')));
  }
  s.drained = s.state.find("DRAIN") != std::string::npos;
  const std::size_t reason = text.find(" Reason=", state == std::string_view::npos ? 0 : state);
  if (reason != std::string_view::npos) {
    std::string_view r = text.substr(reason + 8);
    if (r.ends_with("]")) {
      if (const std::size_t open = r.rfind(" ["); open != std::string_view::npos)
        r = r.substr(0, open);
    }
    s.reason = std::string(r);
  }
  return s;
}

CheckDecision decide_check(std::string_view host, const NodeAnswer& answer,
                           const SlurmNodeState& node, bool fail_closed) {
  CheckDecision d;
  const std::string h(host);
  const bool ours = node.drained && starts_with_prefix(node.reason);
  const bool theirs = node.drained && !ours;
  if (answer.verdict == "healthy") {
    if (ours) {
      d.action = CheckAction::kResume;
      d.message = h + ": fabric healthy, resuming (was drained: " + one_line(node.reason) + ")";
    }
    return d;
  }
  if (answer.verdict == "fabric incident") {
    d.message = h + ": " + answer.reason + ": a fabric-wide fault, not this node's: not draining";
    return d;
  }
  if (answer.verdict == "unhealthy") {
    d.exit_code = kCheckUnhealthy;
    if (theirs) {
      d.message = h + ": " + answer.reason + "; drained by someone else (" + one_line(node.reason) +
                  "): left as it is";
    } else if (ours && node.reason == answer.reason) {
      d.message = h + ": " + answer.reason + " (drained already)";
    } else {
      d.action = CheckAction::kDrain;
      d.reason = answer.reason;
      d.message = h + ": draining: " + answer.reason;
    }
    return d;
  }
  d.exit_code = kCheckUnknown;
  if (fail_closed && !theirs && !(ours && node.reason == kUnknownReason)) {
    d.action = CheckAction::kDrain;
    d.reason = std::string(kUnknownReason);
    d.message = h + ": fabric health unknown (" + answer.reason + "): draining (--fail-closed)";
  } else {
    d.message = h + ": fabric health unknown (" + answer.reason + "): nothing done" +
                (fail_closed ? "" : " (fail-open)");
  }
  return d;
}

CommandResult run_command(const std::vector<std::string>& argv,
                          std::chrono::steady_clock::time_point deadline) {
  CommandResult r;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  const pid_t pid = spawn_child(argv, {}, false, fds[1]);
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    r.error = std::strerror(errno);
    return r;
  }
  ChildOutput child = read_child_output(pid, fds[0], {deadline, kMaxScontrolBytes, {}});
  r.out = std::move(child.output);
  if (child.cut == ChildOutput::Cut::kTimeout) {
    r.error = "did not finish in time";
  } else if (child.cut == ChildOutput::Cut::kTooLarge) {
    r.error = "wrote too much";
  } else if (!WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0) {
    r.error = describe_status(child.status);
  } else {
    r.ok = true;
  }
  return r;
}

int run_check_node(const CheckNodeOptions& o,
                   const std::function<HttpGetResult(const HttpGetRequest&)>& get,
                   const CommandRunner& run) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + o.timeout;
  HttpGetRequest req;
  req.url = o.url;
  req.target = "/nodes/" + o.host;
  req.body_limit = kMaxAnswerBytes;
  req.ca_file = o.ca_file;
  // Half the time for the daemon: scontrol gets the rest.
  req.deadline = start + o.timeout / 2;
  if (std::string error; !add_basic_auth(req, o.user, o.password_file, error)) {
    std::cerr << "ibfx check-node: " << error << "\n";
    return kCheckUsage;
  }
  const NodeAnswer answer = read_node_answer(get(req));
  SlurmNodeState node;
  const bool need_slurm = answer.verdict == "healthy" || answer.verdict == "unhealthy" ||
                          (answer.verdict == "unknown" && o.fail_closed);
  if (need_slurm) {
    const CommandResult shown = run({o.scontrol, "-o", "show", "node", o.host}, deadline);
    if (!shown.ok) {
      std::cerr << "ibfx check-node: " << o.host << ": " << o.scontrol
                << " show node: " << one_line(shown.error) << "\n";
      return kCheckFailed;
    }
    node = parse_scontrol_node(shown.out);
    if (!node.found) {
      std::cerr << "ibfx check-node: " << o.host << ": Slurm has no such node\n";
      return kCheckFailed;
    }
  }
  const CheckDecision d = decide_check(o.host, answer, node, o.fail_closed);
  if (d.action == CheckAction::kNothing) {
    if (!d.message.empty()) std::cerr << "ibfx check-node: " << d.message << "\n";
    return d.exit_code;
  }
  std::vector<std::string> argv = {o.scontrol, "update", "nodename=" + o.host};
  if (d.action == CheckAction::kDrain) {
    argv.push_back("state=drain");
    // One argument: scontrol takes the rest of it as the reason, spaces and
    // all, and no shell ever reads it.
    argv.push_back("reason=" + d.reason);
  } else {
    argv.push_back("state=resume");
  }
  if (o.dry_run) {
    std::cout << "ibfx check-node: --dry-run: " << d.message << "\n  would run:";
    for (const std::string& a : argv) std::cout << " [" << a << "]";
    std::cout << "\n";
    return d.exit_code;
  }
  std::cout << "ibfx check-node: " << d.message << "\n";
  const CommandResult done = run(argv, deadline);
  if (!done.ok) {
    std::cerr << "ibfx check-node: " << o.host << ": " << o.scontrol
              << " update: " << one_line(done.error) << "\n";
    return kCheckFailed;
  }
  return d.exit_code;
}

bool is_check_node_invocation(int argc, char** argv) {
  return argc >= 2 && std::string_view(argv[1]) == "check-node";
}

int check_node_main(int argc, char** argv) {
  std::string error;
  const auto options = parse_check_node_args(argc, argv, error);
  if (!options) {
    std::cerr << "ibfx check-node: " << error << "\n";
    return kCheckUsage;
  }
  return run_check_node(*options, http_get, run_command);
}

}  // namespace ibfx
