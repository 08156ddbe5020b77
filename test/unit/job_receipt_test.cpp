#include "client/job_receipt.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

using ibfx::HttpGetResult;
using ibfx::ReceiptReply;

HttpGetResult answered_with(unsigned status, std::string body) {
  HttpGetResult r;
  r.outcome = HttpGetResult::Outcome::kAnswered;
  r.where = "mgmt:9690";
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::optional<ibfx::JobReceiptOptions> parse_options(std::vector<std::string> args,
                                                     std::string& error) {
  args.insert(args.begin(), {"ibfabric_exporter", "job-receipt"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ibfx::parse_job_receipt_args(static_cast<int>(argv.size()), argv.data(), error);
}

// The client against fakes: the daemon's answers in turn (the last one
// repeated), scontrol's result; records the GETs, the commands, the sleeps.
struct ReceiptFake {
  std::vector<HttpGetResult> answers;
  bool update_ok = true;
  std::size_t gets = 0;
  std::vector<std::vector<std::string>> runs;
  std::vector<std::chrono::milliseconds> slept;
  std::string target;

  int run(ibfx::JobReceiptOptions o) {
    o.job_id = o.job_id == 0 ? 4711 : o.job_id;
    return ibfx::run_job_receipt(
        o,
        [&](const ibfx::HttpGetRequest& r) {
          target = r.target;
          return answers[std::min(gets++, answers.size() - 1)];
        },
        [&](const std::vector<std::string>& argv, std::chrono::steady_clock::time_point) {
          runs.push_back(argv);
          ibfx::CommandResult c;
          c.ok = update_ok;
          if (!c.ok) c.error = "exited with status 1";
          return c;
        },
        [&](std::chrono::milliseconds d) { slept.push_back(d); });
  }
};

const char* kEnded = R"({"job_id":4711,"line":"network: clean","verdict":"clean","running":false})";
const char* kRunning =
    R"({"job_id":4711,"line":"network: clean","verdict":"clean","running":true})";

}  // namespace

TEST_CASE("job-receipt arguments: the job from --job or SLURM_JOB_ID, checked", "[receipts]") {
  std::string error;
  auto o = parse_options({"--job=4711", "--wait=5s", "--set-comment", "--url", "http://mgmt:9690"},
                         error);
  REQUIRE(o);
  CHECK(o->job_id == 4711);
  CHECK(o->wait == std::chrono::seconds(5));
  CHECK(o->set_comment);
  CHECK(o->field == "AdminComment");
  CHECK(o->url == "http://mgmt:9690");

  ::setenv("SLURM_JOB_ID", "812", 1);
  o = parse_options({}, error);
  REQUIRE(o);
  CHECK(o->job_id == 812);
  ::unsetenv("SLURM_JOB_ID");

  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{},
                                             {"--job=0"},
                                             {"--job=12x"},
                                             {"--job=1", "--url=ftp://x:1"},
                                             {"--job=1", "--field=Reason"},
                                             {"--job=1", "--wait=2h"},
                                             {"--job=1", "--scontrol=scontrol"},
                                             {"--job=1", "--user=u"},
                                             {"--job=1", "--bogus"}}) {
    INFO(bad.size());
    error.clear();
    CHECK_FALSE(parse_options(bad, error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("job-receipt reads the daemon's answer, never trusting its line", "[receipts]") {
  ReceiptReply r = ibfx::read_receipt_reply(answered_with(200, kEnded));
  CHECK(r.state == ReceiptReply::State::kEnded);
  CHECK(r.line == "network: clean");
  CHECK(ibfx::read_receipt_reply(answered_with(200, kRunning)).state ==
        ReceiptReply::State::kRunning);
  r = ibfx::read_receipt_reply(answered_with(404, R"({"error":"no receipt for job 4711"})"));
  CHECK(r.state == ReceiptReply::State::kUnknownJob);
  CHECK(r.error == "no receipt for job 4711");
  CHECK(ibfx::read_receipt_reply(answered_with(500, "")).state == ReceiptReply::State::kNoAnswer);
  CHECK(ibfx::read_receipt_reply(answered_with(200, "<html>")).state ==
        ReceiptReply::State::kNoAnswer);
  HttpGetResult down;
  down.outcome = HttpGetResult::Outcome::kFailed;
  down.error = "connection refused";
  CHECK(ibfx::read_receipt_reply(down).state == ReceiptReply::State::kNoAnswer);
  // Quotes, a newline, a '$' and a backtick in the line: made safe for scontrol.
  r = ibfx::read_receipt_reply(
      answered_with(200, R"({"line":"network: \"x\"\n$(rm) `y`","running":false})"));
  CHECK(r.line ==
        "network: ?x??"
        "?(rm) ?y?");
}

TEST_CASE("job-receipt polls until the job ended, then sets AdminComment", "[receipts]") {
  ReceiptFake f;
  f.answers = {answered_with(404, R"({"error":"no receipt"})"), answered_with(200, kRunning),
               answered_with(200, kEnded)};
  ibfx::JobReceiptOptions o;
  o.set_comment = true;
  o.wait = std::chrono::seconds(30);
  CHECK(f.run(o) == ibfx::kReceiptPrinted);
  CHECK(f.target == "/jobs/4711");
  CHECK(f.gets == 3);
  CHECK(f.slept.size() == 2);
  REQUIRE(f.runs.size() == 1);
  CHECK(f.runs[0] == std::vector<std::string>{"/usr/bin/scontrol", "update", "JobId=4711",
                                              "AdminComment=network: clean"});

  // --field=Comment; scontrol refusing is said.
  ReceiptFake g;
  g.answers = {answered_with(200, kEnded)};
  g.update_ok = false;
  o.field = "Comment";
  CHECK(g.run(o) == ibfx::kReceiptSetFailed);
  REQUIRE(g.runs.size() == 1);
  CHECK(g.runs[0][3] == "Comment=network: clean");

  // Without --set-comment: printed only.
  ReceiptFake h;
  h.answers = {answered_with(200, kEnded)};
  o.set_comment = false;
  CHECK(h.run(o) == ibfx::kReceiptPrinted);
  CHECK(h.runs.empty());
}

TEST_CASE("job-receipt gives up after --wait: still running, unknown, or no daemon", "[receipts]") {
  ibfx::JobReceiptOptions o;
  o.set_comment = true;
  o.wait = std::chrono::milliseconds(0);
  ReceiptFake running;
  running.answers = {answered_with(200, kRunning)};
  CHECK(running.run(o) == ibfx::kReceiptNotYet);
  CHECK(running.runs.empty());
  ReceiptFake unknown;
  unknown.answers = {answered_with(404, "{}")};
  CHECK(unknown.run(o) == ibfx::kReceiptNotYet);
  ReceiptFake down;
  down.answers = {answered_with(503, "no sweep")};
  CHECK(down.run(o) == ibfx::kReceiptNoDaemon);
  CHECK(down.runs.empty());
}

TEST_CASE("job-receipt --running takes the running job's receipt as of now and sets Comment",
          "[receipts]") {
  // Slurm 22.05 refuses to update an ended job: the batch script's last
  // step asks for the receipt so far and sets the job's own Comment.
  std::string error;
  const auto o =
      parse_options({"--job", "4711", "--running", "--set-comment", "--field", "Comment"}, error);
  REQUIRE(o);
  CHECK(o->running);
  CHECK(o->set_comment);
  ReceiptFake f;
  f.answers = {answered_with(200, kRunning)};
  CHECK(f.run(*o) == ibfx::kReceiptPrinted);
  CHECK(f.gets == 1);
  CHECK(f.slept.empty());
  REQUIRE(f.runs.size() == 1);
  CHECK(f.runs[0] == std::vector<std::string>{"/usr/bin/scontrol", "update", "JobId=4711",
                                              "Comment=network: clean"});
  // An ended job's receipt does as well; an unknown job is still not one.
  ReceiptFake ended;
  ended.answers = {answered_with(200, kEnded)};
  CHECK(ended.run(*o) == ibfx::kReceiptPrinted);
  ibfx::JobReceiptOptions quick = *o;
  quick.wait = std::chrono::milliseconds(0);
  ReceiptFake unknown;
  unknown.answers = {answered_with(404, "{}")};
  CHECK(unknown.run(quick) == ibfx::kReceiptNotYet);
  CHECK(unknown.runs.empty());
}
