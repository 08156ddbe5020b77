#include "client/check_node.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

using ibfx::CheckAction;
using ibfx::HttpGetResult;
using ibfx::NodeAnswer;
using ibfx::SlurmNodeState;

HttpGetResult answered(unsigned status, std::string body) {
  HttpGetResult r;
  r.outcome = HttpGetResult::Outcome::kAnswered;
  r.where = "mgmt:9690";
  r.status = status;
  r.body = std::move(body);
  return r;
}

SlurmNodeState slurm(bool drained, std::string reason) {
  SlurmNodeState s;
  s.found = true;
  s.drained = drained;
  s.state = drained ? "IDLE+DRAIN" : "IDLE";
  s.reason = std::move(reason);
  return s;
}

// A check against fakes: what the daemon answers, what `scontrol show`
// prints; records every command run.
struct CheckNodeFake {
  HttpGetResult answer;
  std::string shown = "NodeName=gpu01 Arch=x86_64 CoresPerSocket=1 State=IDLE ThreadsPerCore=1\n";
  bool update_ok = true;
  std::vector<std::vector<std::string>> runs;
  ibfx::HttpGetRequest asked;

  int check(ibfx::CheckNodeOptions o) {
    o.host = o.host.empty() ? "gpu01" : o.host;
    return ibfx::run_check_node(
        o,
        [&](const ibfx::HttpGetRequest& r) {
          asked = r;
          return answer;
        },
        [&](const std::vector<std::string>& argv, std::chrono::steady_clock::time_point) {
          runs.push_back(argv);
          ibfx::CommandResult c;
          c.ok = argv[1] == "-o" || update_ok;
          c.out = argv[1] == "-o" ? shown : "";
          if (!c.ok) c.error = "exited with status 1";
          return c;
        });
  }
};

}  // namespace

TEST_CASE("check-node: the daemon's answer, and every way it can fail, read as a verdict",
          "[check_node]") {
  auto a = ibfx::read_node_answer(
      answered(200, R"({"host":"gpu01","verdict":"unhealthy","reason":"ibfx: mlx5_3 down"})"));
  CHECK(a.verdict == "unhealthy");
  CHECK(a.reason == "ibfx: mlx5_3 down");
  a = ibfx::read_node_answer(answered(200, R"({"verdict":"healthy"})"));
  CHECK(a.verdict == "healthy");
  a = ibfx::read_node_answer(answered(404, R"({"verdict":"unknown","reason":"no HCA"})"));
  CHECK(a.verdict == "unknown");
  CHECK(a.reason == "no HCA");
  a = ibfx::read_node_answer(answered(500, "oops"));
  CHECK(a.verdict == "unknown");
  CHECK(a.reason == "mgmt:9690 answered HTTP 500");
  a = ibfx::read_node_answer(answered(200, "<html>garbage"));
  CHECK(a.verdict == "unknown");
  a = ibfx::read_node_answer(answered(200, R"({"verdict":"drain everything"})"));
  CHECK(a.verdict == "unknown");
  a = ibfx::read_node_answer(answered(200, R"({"verdict":7})"));
  CHECK(a.verdict == "unknown");
  HttpGetResult timed_out;
  timed_out.outcome = HttpGetResult::Outcome::kTimedOut;
  timed_out.where = "mgmt:9690";
  CHECK(ibfx::read_node_answer(timed_out).verdict == "unknown");
  HttpGetResult refused;
  refused.where = "mgmt:9690";
  refused.error = "Connection refused";
  CHECK(ibfx::read_node_answer(refused).reason == "mgmt:9690: Connection refused");
  // A hostile reason on the wire is made safe, and is ours.
  a = ibfx::read_node_answer(
      answered(200, R"({"verdict":"unhealthy","reason":"x\"; $(reboot) `id` \\ \n"})"));
  CHECK(a.reason == "ibfx: x?; ?(reboot) ?id? ? ?");
}

TEST_CASE("check-node: scontrol's one-line node, its state and drain reason", "[check_node]") {
  auto s = ibfx::parse_scontrol_node(
      "NodeName=gpu01 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 Reason=ibfx: mlx5_3 down "
      "(leaf p1) State=X [root@2026-12-05T02:13:00]\n");
  CHECK(s.found);
  CHECK(s.drained);
  CHECK(s.state == "IDLE+DRAIN");
  CHECK(s.reason == "ibfx: mlx5_3 down (leaf p1) State=X");
  s = ibfx::parse_scontrol_node("NodeName=gpu01 State=MIXED ThreadsPerCore=1\n");
  CHECK_FALSE(s.drained);
  CHECK(s.reason.empty());
  CHECK_FALSE(ibfx::parse_scontrol_node("Node gpu01 not found\n").found);
}

TEST_CASE("check-node: drains when unhealthy, resumes only its own drains, fails open",
          "[check_node]") {
  const NodeAnswer healthy{"healthy", ""};
  const NodeAnswer sick{"unhealthy", "ibfx: mlx5_3 down"};
  const NodeAnswer incident{"fabric incident", "ibfx: fabric incident (40 hosts): mlx5_0 down"};
  const NodeAnswer unknown{"unknown", "no answer"};
  auto d = ibfx::decide_check("gpu01", healthy, slurm(false, ""), false);
  CHECK(d.action == CheckAction::kNothing);
  CHECK(d.exit_code == ibfx::kCheckHealthy);
  CHECK(d.message.empty());
  d = ibfx::decide_check("gpu01", healthy, slurm(true, "ibfx: mlx5_3 down"), false);
  CHECK(d.action == CheckAction::kResume);
  d = ibfx::decide_check("gpu01", healthy, slurm(true, "bad DIMM, ticket 42"), false);
  CHECK(d.action == CheckAction::kNothing);
  d = ibfx::decide_check("gpu01", sick, slurm(false, ""), false);
  CHECK(d.action == CheckAction::kDrain);
  CHECK(d.reason == "ibfx: mlx5_3 down");
  CHECK(d.exit_code == ibfx::kCheckUnhealthy);
  d = ibfx::decide_check("gpu01", sick, slurm(true, "ibfx: mlx5_3 down"), false);
  CHECK(d.action == CheckAction::kNothing);
  d = ibfx::decide_check("gpu01", sick, slurm(true, "ibfx: mlx5_0 flapping"), false);
  CHECK(d.action == CheckAction::kDrain);
  d = ibfx::decide_check("gpu01", sick, slurm(true, "bad DIMM"), false);
  CHECK(d.action == CheckAction::kNothing);
  CHECK(d.message.find("left as it is") != std::string::npos);
  d = ibfx::decide_check("gpu01", incident, slurm(false, ""), false);
  CHECK(d.action == CheckAction::kNothing);
  CHECK(d.exit_code == ibfx::kCheckHealthy);
  d = ibfx::decide_check("gpu01", unknown, slurm(false, ""), false);
  CHECK(d.action == CheckAction::kNothing);
  CHECK(d.exit_code == ibfx::kCheckUnknown);
  CHECK(d.message.find("fail-open") != std::string::npos);
  d = ibfx::decide_check("gpu01", unknown, slurm(false, ""), true);
  CHECK(d.action == CheckAction::kDrain);
  CHECK(d.reason == "ibfx: fabric health unknown");
  d = ibfx::decide_check("gpu01", unknown, slurm(true, "bad DIMM"), true);
  CHECK(d.action == CheckAction::kNothing);
}

TEST_CASE("check-node: scontrol is exec'd with the reason as one argument and dry-run runs nothing",
          "[check_node]") {
  CheckNodeFake f;
  f.answer = answered(200, R"j({"verdict":"unhealthy","reason":"ibfx: mlx5_3 down (leaf p1)"})j");
  CHECK(f.check({}) == ibfx::kCheckUnhealthy);
  CHECK(f.asked.target == "/nodes/gpu01");
  REQUIRE(f.runs.size() == 2);
  CHECK(f.runs[0] == std::vector<std::string>{"/usr/bin/scontrol", "-o", "show", "node", "gpu01"});
  CHECK(f.runs[1] == std::vector<std::string>{"/usr/bin/scontrol", "update", "nodename=gpu01",
                                              "state=drain", "reason=ibfx: mlx5_3 down (leaf p1)"});
  CheckNodeFake dry;
  dry.answer = f.answer;
  ibfx::CheckNodeOptions o;
  o.dry_run = true;
  CHECK(dry.check(o) == ibfx::kCheckUnhealthy);
  CHECK(dry.runs.size() == 1);  // the show only
  // Unreachable: no scontrol at all.
  CheckNodeFake down;
  down.answer.error = "Connection refused";
  CHECK(down.check({}) == ibfx::kCheckUnknown);
  CHECK(down.runs.empty());
  // A failing update is reported.
  CheckNodeFake failing;
  failing.answer = f.answer;
  failing.update_ok = false;
  CHECK(failing.check({}) == ibfx::kCheckFailed);
  // Basic auth from the password file's first line.
  CheckNodeFake authed;
  authed.answer = answered(200, R"({"verdict":"healthy"})");
  o = {};
  o.user = "slurm";
  o.password_file = "/nonexistent/password";
  CHECK(authed.check(o) == ibfx::kCheckUsage);
}

TEST_CASE("check-node: arguments", "[check_node]") {
  auto parse = [](std::vector<std::string> args, std::string& error) {
    args.insert(args.begin(), {"ibfabric_exporter", "check-node"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return ibfx::parse_check_node_args(static_cast<int>(argv.size()), argv.data(), error);
  };
  std::string error;
  auto o =
      parse({"--host=gpu01", "--url", "https://mgmt:9690", "--dry-run", "--timeout=3s"}, error);
  REQUIRE(o);
  CHECK(o->host == "gpu01");
  CHECK(o->url == "https://mgmt:9690");
  CHECK(o->dry_run);
  CHECK(o->timeout == std::chrono::seconds(3));
  CHECK_FALSE(parse({"--host=gpu01;reboot"}, error));
  CHECK(error.find("--host") != std::string::npos);
  CHECK_FALSE(parse({"--host=gpu01", "--url=mgmt:9690"}, error));
  CHECK_FALSE(parse({"--host=gpu01", "--url=http://mgmt:9690/x"}, error));
  CHECK_FALSE(parse({"--host=gpu01", "--timeout=1h"}, error));
  CHECK_FALSE(parse({"--host=gpu01", "--scontrol=scontrol"}, error));
  CHECK_FALSE(parse({"--host=gpu01", "--user=x"}, error));
  CHECK_FALSE(parse({"--host=gpu01", "--bogus"}, error));
}
