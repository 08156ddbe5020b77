// A Slurm job's fabric receipt against a real Slurm (issue #44,
// docs/receipts.md): a job runs on two hosts of a simulated fat tree and
// is cancelled; /jobs/<id> shows its would-be receipt while it runs, then
// its receipt (its hosts, a verdict, the one line) once it ended, listed
// by /jobs and shown first on /?job=; infiniband_job_receipts_total counts
// it; the receipt survives a daemon restart; and the job-receipt client,
// run as EpilogSlurmctld would run it, prints the line, which Slurm 22.05
// refuses to put into an ended job's AdminComment or Comment (checked
// here: docs/receipts.md "Into Slurm").
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon_fixture.h"
#include "slurm_fixture.h"
#include "test/sim/fabric_gen.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;
using namespace std::chrono_literals;

namespace {

nlohmann::json receipt_of(Daemon& d, std::uint64_t job) {
  const HttpReply r = http_get(d.port(), "/jobs/" + std::to_string(job));
  if (r.status != 200) return nullptr;
  return nlohmann::json::parse(r.body, nullptr, false);
}

double receipts_total(Daemon& d) {
  double total = 0;
  for (const auto& [key, v] : d.series()) {
    if (key.rfind("infiniband_job_receipts_total{", 0) == 0) total += v;
  }
  return total;
}

// scontrol's one-line view of a job, whatever its state (MinJobAge keeps
// an ended job in slurmctld for 300 s by default).
std::string show_job(const SlurmCluster& slurm, std::uint64_t job) {
  return slurm.run({"scontrol", "-o", "show", "job", std::to_string(job)}).out;
}

}  // namespace

TEST_CASE(
    "Slurm job receipts on ibsim: finished when the job ends, kept across a restart, refused "
    "by Slurm in an ended job's AdminComment",
    "[receipts][slurm][integration]") {
  FatTreeSpec spec{.servers = 4, .rails = 2, .tiers = 2, .radix = 8};
  SimFabric sim(make_fat_tree(spec));
  SlurmCluster slurm({"gpu0001", "gpu0002", "gpu0003"});
  const std::uint64_t train = slurm.submit("train", {"gpu0001", "gpu0002"});
  REQUIRE(slurm.wait_state(train, "RUNNING"));

  const std::string config = ConfigYaml()
                                 .sweep_interval("1s")
                                 .set("jobs.source", "slurmrestd")
                                 .set("jobs.url", slurm.rest_url())
                                 .set("jobs.poll_interval", "1s")
                                 .set("jobs.timeout", "2s")
                                 .write(sim.dir() + "/exporter.yaml");
  auto daemon = std::make_unique<Daemon>(sim, std::vector<std::string>{"--config.file=" + config});
  REQUIRE(daemon->wait_ready());
  const std::string id = std::to_string(train);

  // Running: the receipt it would get if it ended now, said so.
  nlohmann::json running;
  REQUIRE(eventually([&] {
    running = receipt_of(*daemon, train);
    return running.is_object() && running.value("running", false);
  }));
  CHECK(running["job_id"] == train);
  CHECK(receipts_total(*daemon) == 0);
  CHECK(daemon->series().count("infiniband_job_receipts_total{verdict=\"clean\"}") == 1);
  // The daemon's own metrics are serialized before the sweep's receipts step:
  // one sweep behind.
  CHECK(daemon->wait_value("infiniband_exporter_receipts_running_jobs", 1));
  // Errors: a malformed id, an unknown job.
  CHECK(http_get(daemon->port(), "/jobs/12ab").status == 400);
  CHECK(http_get(daemon->port(), "/jobs/999999").status == 404);
  CHECK(http_get(daemon->port(), "/jobs?user=%3Cscript%3E").status == 400);

  // The batch script's last step, while the job still runs (Slurm refuses
  // to update an ended job): the receipt as of now into the job's Comment.
  const std::string url = "--url=http://127.0.0.1:" + std::to_string(daemon->port());
  {
    const RunResult set =
        slurm.run({IBFX_DAEMON_PATH, "job-receipt", "--job=" + id, url, "--running",
                   "--set-comment", "--field=Comment", "--scontrol=/usr/bin/scontrol"},
                  30s);
    INFO(set.out << set.err);
    CHECK(set.exit_code == 0);
    REQUIRE(set.out.rfind("network: ", 0) == 0);
    const std::string shown = show_job(slurm, train);
    INFO(shown);
    CHECK(shown.find("Comment=" + set.out.substr(0, set.out.size() - 1)) != std::string::npos);
  }

  // Ended: within a sweep and a poll of leaving the running list.
  slurm.cancel(train);
  REQUIRE(slurm.wait_gone(train));
  nlohmann::json receipt;
  REQUIRE(eventually(
      [&] {
        receipt = receipt_of(*daemon, train);
        return receipt.is_object() && !receipt.value("running", true);
      },
      20s));
  INFO(receipt.dump(1));
  CHECK(receipt["job_id"] == train);
  CHECK(receipt["name"] == "train");
  CHECK(receipt["user"] == "root");
  CHECK(receipt["hosts"] == nlohmann::json::array({"gpu0001", "gpu0002"}));
  const std::string verdict = receipt.value("verdict", "");
  CHECK((verdict == "clean" || verdict == "no_data" || verdict == "unattributed" ||
         verdict == "self_inflicted" || verdict == "other_jobs" || verdict == "link_fault"));
  const std::string line = receipt.value("line", "");
  REQUIRE(line.rfind("network: ", 0) == 0);
  CHECK(line.find('"') == std::string::npos);
  CHECK(daemon->wait_value("infiniband_job_receipts_total{verdict=\"" + verdict + "\"}", 1));
  CHECK(receipts_total(*daemon) == 1);
  const HttpReply text = http_get(daemon->port(), "/jobs/" + id + "?format=text");
  CHECK(text.status == 200);
  CHECK(text.body.find(line) != std::string::npos);
  const HttpReply list = http_get(daemon->port(), "/jobs?user=root&format=text");
  CHECK(list.body.rfind(id + " " + verdict, 0) == 0);
  const HttpReply page = http_get(daemon->port(), "/?job=" + id);
  CHECK(page.status == 200);
  CHECK(page.body.find("Fabric receipt") != std::string::npos);

  // Restart on the same state directory: the receipt is still there.
  REQUIRE(daemon->process().terminate(10s) == 0);
  daemon = std::make_unique<Daemon>(sim, std::vector<std::string>{"--config.file=" + config});
  REQUIRE(daemon->wait_ready());
  const nlohmann::json kept = receipt_of(*daemon, train);
  REQUIRE(kept.is_object());
  CHECK(kept["line"] == line);
  CHECK(kept["hosts"] == receipt["hosts"]);
  CHECK(kept["running"] == false);

  // Into Slurm, as EpilogSlurmctld runs it (SLURM_JOB_ID in its
  // environment): the client prints the line, but Slurm 22.05 refuses to
  // update an ended job's AdminComment or Comment ("Job has already
  // finished"): said, exit status 3 (docs/receipts.md "Into Slurm").
  const std::string restarted_url = "--url=http://127.0.0.1:" + std::to_string(daemon->port());
  for (const char* field : {"--field=AdminComment", "--field=Comment"}) {
    const RunResult set =
        slurm.run({IBFX_DAEMON_PATH, "job-receipt", "--job=" + id, restarted_url, "--wait=20s",
                   "--set-comment", field, "--scontrol=/usr/bin/scontrol"},
                  30s);
    INFO(field << ": " << set.out << set.err);
    CHECK(set.exit_code == 3);
    CHECK(set.out == line + "\n");
    CHECK(set.err.find("Job has already finished") != std::string::npos);
  }
  CHECK(show_job(slurm, train).find("AdminComment=network") == std::string::npos);
}
