#include "client/job_receipt.h"

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>
#include <vector>

#include "config/config.h"

namespace ibfx {
namespace {

// One receipt is a few kB; a megabyte is a mistake.
constexpr std::size_t kMaxReceiptBytes = 1 << 20;
// One GET never takes more than this of --wait: the next poll tries again.
constexpr std::chrono::milliseconds kGetTimeout{10000};
// scontrol's share, after the waiting.
constexpr std::chrono::milliseconds kScontrolTimeout{10000};
// Slurm's comments hold more; the daemon's line is at most 200 bytes.
constexpr std::size_t kCommentMax = 256;

std::optional<std::uint64_t> job_id_of(std::string_view text) {
  std::uint64_t id = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, id);
  if (text.empty() || ec != std::errc() || ptr != end || id == 0) return std::nullopt;
  return id;
}

bool parse_ms(const std::string& name, const std::string& value, std::chrono::milliseconds& out,
              std::string& error) {
  try {
    out = std::chrono::duration_cast<std::chrono::milliseconds>(parse_duration(value));
  } catch (const std::exception& e) {
    error = name + ": " + one_line(e.what());
    return false;
  }
  return true;
}

}  // namespace

std::optional<JobReceiptOptions> parse_job_receipt_args(int argc, char** argv, std::string& error) {
  JobReceiptOptions o;
  std::string job;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::size_t eq = arg.find('=');
    const std::string name(arg.substr(0, eq));
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(arg.substr(eq + 1));
    } else if (name != "--set-comment" && name != "--running" && i + 1 < argc) {
      value = argv[++i];
    }
    if (name == "--set-comment") {
      o.set_comment = true;
    } else if (name == "--running") {
      o.running = true;
    } else if (name == "--job") {
      job = value;
    } else if (name == "--url") {
      o.url = value;
    } else if (name == "--wait") {
      if (!parse_ms(name, value, o.wait, error)) return std::nullopt;
    } else if (name == "--poll") {
      if (!parse_ms(name, value, o.poll, error)) return std::nullopt;
    } else if (name == "--field") {
      o.field = value;
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
              " (job-receipt --job=ID [--wait=60s] [--running] [--url=http(s)://host:port] "
              "[--set-comment "
              "[--field=AdminComment|Comment]] [--user=U --password-file=F] [--ca-file=F] "
              "[--scontrol=PATH])";
      return std::nullopt;
    }
  }
  if (job.empty()) {
    // EpilogSlurmctld and the job's own scripts have it.
    if (const char* env = std::getenv("SLURM_JOB_ID"); env != nullptr) job = env;
  }
  const auto id = job_id_of(job);
  if (!id) {
    error = "--job: a Slurm job id (a positive number; default SLURM_JOB_ID), got \"" +
            one_line(job) + "\"";
    return std::nullopt;
  }
  o.job_id = *id;
  if (o.wait < std::chrono::milliseconds(0) || o.wait > std::chrono::hours(1)) {
    error = "--wait: must be at most 1h";
    return std::nullopt;
  }
  if (o.poll < std::chrono::milliseconds(100) || o.poll > std::chrono::minutes(1)) {
    error = "--poll: must be between 100ms and 1m";
    return std::nullopt;
  }
  if (o.field != "AdminComment" && o.field != "Comment") {
    error = "--field: AdminComment or Comment";
    return std::nullopt;
  }
  if (!check_client_options(o.url, o.user, o.password_file, o.scontrol, error)) return std::nullopt;
  return o;
}

ReceiptReply read_receipt_reply(const HttpGetResult& got) {
  ReceiptReply r;
  if (got.outcome == HttpGetResult::Outcome::kTimedOut) {
    r.error = "no answer from " + one_line(got.where) + " in time";
    return r;
  }
  if (got.outcome != HttpGetResult::Outcome::kAnswered) {
    r.error = one_line(got.where) + ": " + one_line(got.error);
    return r;
  }
  const auto j = nlohmann::json::parse(got.body, nullptr, false);
  if (got.status == 404) {
    // The daemon has not seen the job (yet): a job shorter than a sweep,
    // or one it never saw run.
    r.state = ReceiptReply::State::kUnknownJob;
    r.error = j.is_object() && j.contains("error") && j["error"].is_string()
                  ? one_line(j["error"].get<std::string>())
                  : "no receipt";
    return r;
  }
  if (got.status != 200) {
    r.error = one_line(got.where) + " answered HTTP " + std::to_string(got.status);
    return r;
  }
  if (j.is_discarded() || !j.is_object() || !j.contains("line") || !j["line"].is_string()) {
    r.error = one_line(got.where) + " answered something other than a job receipt";
    return r;
  }
  r.line = slurm_safe_text(j["line"].get<std::string>());
  if (r.line.size() > kCommentMax) r.line.resize(kCommentMax);
  const bool running =
      j.contains("running") && j["running"].is_boolean() && j["running"].get<bool>();
  r.state = running ? ReceiptReply::State::kRunning : ReceiptReply::State::kEnded;
  return r;
}

int run_job_receipt(const JobReceiptOptions& o,
                    const std::function<HttpGetResult(const HttpGetRequest&)>& get,
                    const CommandRunner& run,
                    const std::function<void(std::chrono::milliseconds)>& sleep) {
  const std::string id = std::to_string(o.job_id);
  HttpGetRequest req;
  req.url = o.url;
  req.target = "/jobs/" + id;
  req.body_limit = kMaxReceiptBytes;
  req.ca_file = o.ca_file;
  if (std::string error; !add_basic_auth(req, o.user, o.password_file, error)) {
    std::cerr << "ibfx job-receipt: " << error << "\n";
    return kCheckUsage;
  }
  const auto give_up = std::chrono::steady_clock::now() + o.wait;
  ReceiptReply reply;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    req.deadline = now + std::min<std::chrono::steady_clock::duration>(
                             kGetTimeout, std::max<std::chrono::steady_clock::duration>(
                                              give_up - now, std::chrono::milliseconds(500)));
    reply = read_receipt_reply(get(req));
    if (reply.state == ReceiptReply::State::kEnded) break;
    if (o.running && reply.state == ReceiptReply::State::kRunning) break;
    if (std::chrono::steady_clock::now() + o.poll > give_up) break;
    sleep(o.poll);
  }
  switch (reply.state) {
    case ReceiptReply::State::kEnded:
      break;
    case ReceiptReply::State::kRunning:
      if (o.running) break;  // the receipt as of now, asked for
      std::cerr << "ibfx job-receipt: job " << id << " still runs, as the daemon sees it ("
                << reply.line << ")\n";
      return kReceiptNotYet;
    case ReceiptReply::State::kUnknownJob:
      std::cerr << "ibfx job-receipt: job " << id << ": " << reply.error << "\n";
      return kReceiptNotYet;
    case ReceiptReply::State::kNoAnswer:
      std::cerr << "ibfx job-receipt: job " << id << ": " << reply.error << "\n";
      return kReceiptNoDaemon;
  }
  std::cout << reply.line << "\n";
  if (!o.set_comment) return kReceiptPrinted;
  // One argument: scontrol takes the rest of it as the value, spaces and
  // all, and no shell ever reads it.
  const CommandResult done = run({o.scontrol, "update", "JobId=" + id, o.field + "=" + reply.line},
                                 std::chrono::steady_clock::now() + kScontrolTimeout);
  if (!done.ok) {
    std::cerr << "ibfx job-receipt: job " << id << ": " << o.scontrol
              << " update: " << one_line(done.error) << " " << one_line(done.out) << "\n";
    return kReceiptSetFailed;
  }
  return kReceiptPrinted;
}

bool is_job_receipt_invocation(int argc, char** argv) {
  return argc >= 2 && std::string_view(argv[1]) == "job-receipt";
}

int job_receipt_main(int argc, char** argv) {
  std::string error;
  const auto options = parse_job_receipt_args(argc, argv, error);
  if (!options) {
    std::cerr << "ibfx job-receipt: " << error << "\n";
    return kCheckUsage;
  }
  return run_job_receipt(*options, http_get, run_command,
                         [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); });
}

}  // namespace ibfx
