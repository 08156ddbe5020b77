// A Slurm job's fabric receipt against a real Slurm (issue #44,
// docs/receipts.md): a job runs on two hosts of a simulated fat tree and
// is cancelled; /jobs/<id> shows its would-be receipt while it runs, then
// its receipt (its hosts, a verdict, the one line) once it ended, listed
// by /jobs and shown first on /?job=; infiniband_job_receipts_total counts
// it; the receipt survives a daemon restart; and the job-receipt client,
// run as EpilogSlurmctld would run it, prints the line, which Slurm 22.05
// refuses to put into an ended job's AdminComment or Comment (checked
// here: docs/receipts.md "Into Slurm").
//
// Whose congestion, on traffic the scenario driver plays into ibsim
// (test/scenarios/receipts_incast.yaml): job A's hosts send an incast whose
// tree stalls job B's host; B's receipt names A, A's says self-inflicted,
// a job on quiet hosts is clean. And a job whose HCA cable flaps
// (receipts_flap.yaml) lists the flap.
//
// A job that runs across a daemon restart gets one receipt, from Slurm's
// start_time to its end_time, that says what no daemon saw.
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "slurm_fixture.h"
#include "test/scenario/scenario.h"
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

// The daemon's job source: the cluster's slurmrestd, polled every second.
ConfigYaml jobs_config(const SlurmCluster& slurm) {
  ConfigYaml yaml;
  yaml.set("jobs.source", "slurmrestd")
      .set("jobs.url", slurm.rest_url())
      .set("jobs.poll_interval", "1s")
      .set("jobs.timeout", "2s");
  return yaml;
}

// A scenario played into ibsim's console on the wall clock: every tick due
// by now is sent, then `done` is asked, until it holds or `timeout` passes.
// A step that runs late is caught up at once, so that the counters' rates
// stay those the scenario sets.
class Player {
 public:
  Player(ScenarioDriver& driver, SimFabric& sim) : driver_(driver), sim_(sim) {}

  bool play_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    if (!started_) {
      began_ = std::chrono::steady_clock::now();
      started_ = true;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const double now =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
      while (!driver_.done() && driver_.time() <= now) {
        for (const std::string& line : driver_.step()) sim_.console(line);
      }
      if (done()) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_until(began_ +
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(driver_.time())));
    }
  }

 private:
  ScenarioDriver& driver_;
  SimFabric& sim_;
  bool started_ = false;
  std::chrono::steady_clock::time_point began_;
};

ScenarioDriver scenario_driver(const std::string& file) {
  return ScenarioDriver(load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/" + file));
}

bool ended(const nlohmann::json& receipt) {
  return receipt.is_object() && !receipt.value("running", true);
}

// The job's receipt once it ended, waiting up to 20 s (a poll and a sweep
// after Slurm ended the job); still running or absent when it did not.
nlohmann::json ended_receipt_of(Daemon& d, std::uint64_t job) {
  nlohmann::json receipt;
  eventually([&] {
    receipt = receipt_of(d, job);
    return ended(receipt);
  });
  return receipt;
}

// The stall split adds up to the stall (docs/receipts.md, "Whose congestion").
void check_split(const nlohmann::json& r) {
  const double parts = r["self_stall_seconds"].get<double>() +
                       r["other_jobs_stall_seconds"].get<double>() +
                       r["unattributed_stall_seconds"].get<double>() +
                       r["outside_trees_stall_seconds"].get<double>();
  CHECK(parts == Approx(r["stall_seconds"].get<double>()).margin(1e-6));
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

  const std::string config =
      jobs_config(slurm).sweep_interval("1s").write(sim.dir() + "/exporter.yaml");
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
  const nlohmann::json receipt = ended_receipt_of(*daemon, train);
  REQUIRE(ended(receipt));
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

// Issue #44's headline: an incast whose tree reaches another job's host.
// receipts_incast.yaml: "gpu0005".."gpu0007 mlx5_0" (job A) send into
// "gpu0001 mlx5_0" (no job), the leaf port into it the root; "gpu0008
// mlx5_0" (job B) waits in the tree without sending; gpu0002 and gpu0003
// (job C) are quiet, outside it. The receipts attribute a tree to the jobs
// whose hosts are its root's senders: those need the route model (the
// switches' tables read) and the HCA ports' PortXmitData.
TEST_CASE("Slurm job receipts on ibsim: an incast's victim job names the job whose hosts fed it",
          "[receipts][slurm][integration][congestion][routes]") {
  ScenarioDriver driver = scenario_driver("receipts_incast.yaml");
  SimFabric sim(driver.fabric());
  SlurmCluster slurm({"gpu0002", "gpu0003", "gpu0005", "gpu0006", "gpu0007", "gpu0008"});
  // The scenario's PortXmitWait tick; a sweep's rates cover a whole number
  // of the driver's ticks, give or take one: the root's 98 % is read as
  // saturated at 75 % (as analysis_test's trees are).
  const std::string config = jobs_config(slurm)
                                 .sweep_interval("2s")
                                 .scenario_tick()
                                 .set("scores.saturation_threshold", "0.75")
                                 .write(sim.dir() + "/exporter.yaml");
  Daemon daemon(sim, {"--config.file=" + config});
  REQUIRE(daemon.wait_ready());
  // The senders come from the tables: read before the traffic starts.
  REQUIRE(eventually(
      [&] { return http_get(daemon.port(), "/routes?node=leaf-r0-01").status == 200; }, 30s));

  const std::uint64_t a = slurm.submit("incast", {"gpu0005", "gpu0006", "gpu0007"});
  const std::uint64_t b = slurm.submit("victim", {"gpu0008"});
  const std::uint64_t c = slurm.submit("quiet", {"gpu0002", "gpu0003"});
  for (const std::uint64_t job : {a, b, c}) REQUIRE(slurm.wait_state(job, "RUNNING"));
  REQUIRE(eventually([&] {
    for (const std::uint64_t job : {a, b, c}) {
      if (!receipt_of(daemon, job).is_object()) return false;
    }
    return true;
  }));

  // The incast until the running receipts blame its tree on A's hosts, from
  // B's side and from A's, over a few sweeps (kObserved); then the three
  // jobs end (the tree still on).
  constexpr double kObserved = 8;
  Player player(driver, sim);
  nlohmann::json ra;
  nlohmann::json rb;
  const bool attributed = player.play_until(
      [&] {
        ra = receipt_of(daemon, a);
        rb = receipt_of(daemon, b);
        return ra.is_object() && rb.is_object() && ra["self_stall_seconds"] > 0 &&
               rb["other_jobs_stall_seconds"] > 0 && rb["observed_seconds"] >= kObserved;
      },
      30s);
  INFO("A running: " << ra.dump() << "\nB running: " << rb.dump());
  if (!attributed) {
    // What the analysis saw: the roots and their senders (a tree not
    // found, or no senders: no route model).
    const HttpReply status = http_get(daemon.port(), "/status.json");
    const nlohmann::json roots = nlohmann::json::parse(status.body, nullptr, false);
    UNSCOPED_INFO("roots: " << (roots.is_object() ? roots["roots"].dump() : status.body));
  }
  REQUIRE(attributed);
  for (const std::uint64_t job : {a, b, c}) slurm.cancel(job);
  nlohmann::json rc;
  REQUIRE(player.play_until(
      [&] {
        ra = receipt_of(daemon, a);
        rb = receipt_of(daemon, b);
        rc = receipt_of(daemon, c);
        return ended(ra) && ended(rb) && ended(rc);
      },
      30s));
  INFO("A: " << ra.dump(1) << "\nB: " << rb.dump(1) << "\nC: " << rc.dump(1));

  // B waited in A's tree: A is the culprit of most of its stall.
  CHECK(rb["hosts"] == nlohmann::json::array({"gpu0008"}));
  CHECK(rb["verdict"] == "other_jobs");
  REQUIRE(!rb["culprits"].empty());
  CHECK(rb["culprits"][0]["job_id"] == a);
  CHECK(rb["culprits"][0]["stall_seconds"].get<double>() > 0.5 * rb["stall_seconds"].get<double>());
  CHECK(rb["worst_port"]["host"] == "gpu0008");
  CHECK(rb["worst_port"]["device"] == "mlx5_0");
  // The line names A alone: the other hosts' management traffic (ibsim
  // counts the daemon's MADs) makes C a culprit of nanoseconds, not named.
  const std::string b_line = rb.value("line", "");
  CHECK(b_line.rfind("network: ", 0) == 0);
  const std::string named = " in trees fed by job " + std::to_string(a);
  const auto at = b_line.find(named);
  REQUIRE(at != std::string::npos);
  CHECK((at + named.size() == b_line.size() || b_line[at + named.size()] == ';'));
  check_split(rb);

  // A's hosts fed the tree its own senders waited in: self-inflicted; what
  // the split gives other jobs is under the clean threshold (1 %).
  CHECK(ra["verdict"] == "self_inflicted");
  CHECK(ra["self_stall_seconds"].get<double>() > 0.5 * ra["stall_seconds"].get<double>());
  CHECK(ra["other_jobs_stall_seconds"].get<double>() < 0.01 * ra["port_seconds"].get<double>());
  CHECK(ra.value("line", "").find("(self-inflicted)") != std::string::npos);
  CHECK(ra["bytes_sent"].get<double>() > 0);
  check_split(ra);

  // C's hosts were outside the tree: measured, and clean (the line may go
  // on to say the part of its short run before the first full sweep).
  CHECK(rc["verdict"] == "clean");
  CHECK(rc["port_seconds"].get<double>() > 0);
  CHECK(rc["stall_seconds"] == 0);
  CHECK(rc.value("line", "").rfind("network: clean", 0) == 0);

  for (const char* verdict : {"other_jobs", "self_inflicted", "clean"}) {
    CHECK(daemon.wait_value(
        "infiniband_job_receipts_total{verdict=\"" + std::string(verdict) + "\"}", 1));
  }
}

// A job whose HCA cable flaps while it runs (receipts_flap.yaml: "gpu0003
// mlx5_1" down twice, LinkDowned on both ends, as hardware counts it) lists
// the flap in its receipt; a job on other hosts lists nothing.
TEST_CASE("Slurm job receipts on ibsim: a job whose HCA cable flaps lists the flap",
          "[receipts][slurm][integration][links]") {
  ScenarioDriver driver = scenario_driver("receipts_flap.yaml");
  SimFabric sim(driver.fabric());
  SlurmCluster slurm({"gpu0002", "gpu0003", "gpu0004"});
  // A discovery every 2 s: the HCA the flap took away comes back soon.
  const std::string config = jobs_config(slurm)
                                 .sweep_interval("1s")
                                 .set("discovery.interval", "2s")
                                 .write(sim.dir() + "/exporter.yaml");
  Daemon daemon(sim, {"--config.file=" + config});
  REQUIRE(daemon.wait_ready());
  const std::uint64_t flapped = slurm.submit("flapped", {"gpu0003", "gpu0004"});
  const std::uint64_t steady = slurm.submit("steady", {"gpu0002"});
  for (const std::uint64_t job : {flapped, steady}) REQUIRE(slurm.wait_state(job, "RUNNING"));
  REQUIRE(eventually([&] {
    return receipt_of(daemon, flapped).is_object() && receipt_of(daemon, steady).is_object();
  }));

  // Until the running receipt has seen both downs and the cable back up
  // (the link tracker says flapping once the HCA is Active again), then
  // the jobs end.
  Player player(driver, sim);
  nlohmann::json rf;
  const bool seen = player.play_until(
      [&] {
        rf = receipt_of(daemon, flapped);
        return rf.is_object() && !rf["links"].empty() && rf["links"][0]["downs"] >= 2 &&
               rf["links"][0]["condition"] == "flapping";
      },
      40s);
  INFO("running: " << rf.dump());
  REQUIRE(seen);
  for (const std::uint64_t job : {flapped, steady}) slurm.cancel(job);
  nlohmann::json rs;
  REQUIRE(player.play_until(
      [&] {
        rf = receipt_of(daemon, flapped);
        rs = receipt_of(daemon, steady);
        return ended(rf) && ended(rs);
      },
      30s));
  INFO("flapped: " << rf.dump(1) << "\nsteady: " << rs.dump(1));

  REQUIRE(rf["links"].size() == 1);
  const nlohmann::json& link = rf["links"][0];
  CHECK(link["port"]["host"] == "gpu0003");
  CHECK(link["port"]["device"] == "mlx5_1");
  CHECK(link["condition"] == "flapping");
  CHECK(link["downs"] == 2);
  CHECK(link["first_seen"].get<double>() >= rf["start"].get<double>());
  CHECK(link["last_seen"].get<double>() <= rf["end"].get<double>());
  // No traffic, so no stall: the flap is the verdict.
  CHECK(rf["verdict"] == "link_fault");
  CHECK(rf.value("line", "").find("mlx5_1 on gpu0003 flapped twice") != std::string::npos);

  CHECK(rs["links"].empty());
  CHECK(rs["verdict"] == "clean");
}

namespace {

// scontrol's one-line view of a job, its times as Unix seconds
// (SLURM_TIME_FORMAT=%s).
std::string slurm_receipts_show(const SlurmCluster& slurm, std::uint64_t job) {
  return slurm
      .run({"env", "SLURM_TIME_FORMAT=%s", "scontrol", "-o", "show", "job", std::to_string(job)})
      .out;
}

// StartTime or EndTime in `shown`; -1: not there.
double slurm_receipts_time(const std::string& shown, const std::string& field) {
  const auto at = shown.find(" " + field + "=");
  if (at == std::string::npos) return -1;
  try {
    return std::stod(shown.substr(at + field.size() + 2));
  } catch (const std::exception&) {
    return -1;
  }
}

// Cancels `job` and returns Slurm's EndTime, read as soon as it ended: the
// fixture's MinJobAge (2 s) lets slurmctld forget an ended job soon after.
double slurm_receipts_cancel(SlurmCluster& slurm, std::uint64_t job) {
  slurm.cancel(job);
  double end = -1;
  eventually([&] {
    const std::string shown = slurm_receipts_show(slurm, job);
    if (shown.find(" JobState=CANCELLED ") == std::string::npos) return false;
    end = slurm_receipts_time(shown, "EndTime");
    return true;
  });
  return end;
}

// How many lines of /jobs?format=text are job `job`'s finished receipts.
int slurm_receipts_listed(Daemon& d, std::uint64_t job) {
  const std::string body = http_get(d.port(), "/jobs?format=text").body;
  const std::string head = std::to_string(job) + " ";
  int n = 0;
  for (std::size_t at = 0; at < body.size();) {
    if (body.compare(at, head.size(), head) == 0) ++n;
    const auto eol = body.find('\n', at);
    if (eol == std::string::npos) break;
    at = eol + 1;
  }
  return n;
}

}  // namespace

// Issue #44: a job that runs across a daemon restart (SIGTERM, then a new
// daemon on the same state directory) gets one receipt covering its whole
// life: the daemon saved the running job's partial receipt at stop
// (receipts-running.json) and restored it at start; the receipt keeps
// Slurm's start_time and says what it did not see (`missed_seconds`: at
// least the time no daemon ran; observed + missed = its duration). A job
// that ended before the restart keeps its receipt.
TEST_CASE("Slurm job receipts on ibsim: a job running across a daemon restart gets one receipt",
          "[receipts][slurm][integration][restart]") {
  FatTreeSpec spec{.servers = 4, .rails = 2, .tiers = 2, .radix = 8};
  SimFabric sim(make_fat_tree(spec));
  SlurmCluster slurm({"gpu0001", "gpu0002", "gpu0003"});
  const std::uint64_t across = slurm.submit("across", {"gpu0001", "gpu0002"});
  const std::uint64_t before = slurm.submit("before", {"gpu0003"});
  for (const std::uint64_t job : {across, before}) REQUIRE(slurm.wait_state(job, "RUNNING"));
  const double started = slurm_receipts_time(slurm_receipts_show(slurm, across), "StartTime");
  REQUIRE(started > 0);

  const std::string config =
      jobs_config(slurm).sweep_interval("1s").write(sim.dir() + "/exporter.yaml");
  auto daemon = std::make_unique<Daemon>(sim, std::vector<std::string>{"--config.file=" + config});
  REQUIRE(daemon->wait_ready());
  // Both measured for a few sweeps; then `before` ends under this daemon.
  nlohmann::json first;
  REQUIRE(eventually([&] {
    first = receipt_of(*daemon, across);
    const nlohmann::json b = receipt_of(*daemon, before);
    return first.is_object() && first["observed_seconds"].get<double>() >= 2 && b.is_object() &&
           b["observed_seconds"].get<double>() > 0;
  }));
  const double before_end = slurm_receipts_cancel(slurm, before);
  REQUIRE(before_end > 0);
  const nlohmann::json ended_before = ended_receipt_of(*daemon, before);
  REQUIRE(ended(ended_before));
  // Ended at Slurm's end_time (the list shows the ended job), not at the
  // poll that found it gone.
  CHECK(ended_before["end"].get<double>() == before_end);

  // SIGTERM while `across` runs; no daemon for a while; a new one on the
  // same state directory (the fixture's default: the simulator's dir).
  first = receipt_of(*daemon, across);
  REQUIRE(first.value("running", false));
  REQUIRE(daemon->process().terminate(10s) == 0);
  const auto stopped = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(2s);
  const double down =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  const double restarted =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  daemon = std::make_unique<Daemon>(sim, std::vector<std::string>{"--config.file=" + config});
  REQUIRE(daemon->wait_ready());

  // The ended receipt from the store, the running one as restored (the
  // job source's first poll and two sweeps are needed before it counts
  // again).
  const nlohmann::json kept = receipt_of(*daemon, before);
  INFO("before, kept: " << kept.dump());
  REQUIRE(ended(kept));
  CHECK(kept["line"] == ended_before["line"]);
  CHECK(kept["end"] == ended_before["end"]);
  const nlohmann::json restored = receipt_of(*daemon, across);
  INFO("across, restored: " << restored.dump());
  REQUIRE(restored.is_object());
  CHECK(restored["running"] == true);
  CHECK(restored["start"] == first["start"]);
  CHECK(restored["observed_seconds"].get<double>() >= first["observed_seconds"].get<double>());

  // Measured again by the new daemon's sweeps, then it ends.
  REQUIRE(eventually([&] {
    const nlohmann::json r = receipt_of(*daemon, across);
    return r.is_object() &&
           r["observed_seconds"].get<double>() >= restored["observed_seconds"].get<double>() + 2;
  }));
  const double across_end = slurm_receipts_cancel(slurm, across);
  REQUIRE(across_end > 0);
  const nlohmann::json receipt = ended_receipt_of(*daemon, across);
  REQUIRE(ended(receipt));
  INFO("across, ended: " << receipt.dump(1));

  // Its whole life: Slurm's start and end, and what no sweep measured said
  // (the time no daemon ran at least, and the part before the first
  // daemon's first full interval).
  CHECK(receipt["start"].get<double>() == started);
  CHECK(receipt["end"].get<double>() == across_end);
  CHECK(receipt["end"].get<double>() >= std::floor(restarted));
  CHECK(receipt["end_known"] == true);
  const double duration = receipt["duration_seconds"].get<double>();
  const double observed = receipt["observed_seconds"].get<double>();
  const double missed = receipt["missed_seconds"].get<double>();
  // Measured after the restart: the 2 s seen before the cancel, less up to
  // 1 s (Slurm's end_time is whole seconds: the part of the intervals past
  // it is not counted).
  CHECK(observed >= restored["observed_seconds"].get<double>() + 1);
  CHECK(missed >= down);
  CHECK(observed + missed == Approx(duration).margin(1e-6));
  CHECK(receipt["hosts"] == nlohmann::json::array({"gpu0001", "gpu0002"}));
  // The line says the part not observed once it is a tenth of the run.
  const std::string line = receipt.value("line", "");
  CHECK(line.rfind("network: ", 0) == 0);
  CHECK((line.find("of its run not observed") != std::string::npos) == (missed / duration >= 0.1));

  // One receipt: finished once, by the new daemon; both listed.
  CHECK(slurm_receipts_listed(*daemon, across) == 1);
  CHECK(slurm_receipts_listed(*daemon, before) == 1);
  CHECK(daemon->wait_value("infiniband_exporter_receipts_stored", 2));
  CHECK(eventually([&] { return receipts_total(*daemon) == 1; }));
}
