// Which jobs the fabric hurts, against a real Slurm (issue #28): jobs
// submitted with sbatch on hosts of a simulated fabric whose HCAs are
// "gpu000N mlx5_M", an incast onto gpu0001's rail-0 HCA
// (test/scenarios/tree_incast.yaml: root leaf-r0-01 port 1); the daemon
// polls slurmrestd (and, a second daemon, squeue --json). The job appears
// within a poll, the root names the job whose HCA it faces and not an
// unrelated one, the series go after scancel, and a slurmrestd killed
// mid-run only turns job_source_up to 0. A real Prometheus scrapes the
// slurmrestd daemon: every panel of dashboards/ibfx-jobs.json returns data
// for the job.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "daemon_fixture.h"
#include "doc_queries.h"
#include "jobs/slurm_job_list.h"
#include "prometheus_fixture.h"
#include "slurm_fixture.h"
#include "test/scenario/scenario.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;

namespace {

std::string job_info(std::uint64_t job, const std::string& name) {
  return "infiniband_job_info{job_id=\"" + std::to_string(job) + "\",job_name=\"" + name +
         "\",user=\"root\",partition=\"gpu\"}";
}

std::string job_key(const std::string& family, std::uint64_t job) {
  return family + "{job_id=\"" + std::to_string(job) + "\"}";
}

// Series of `family` whose labels name `job`.
std::size_t series_of_job(const Series& s, const std::string& family, std::uint64_t job) {
  std::size_t n = 0;
  const std::string label = "job_id=\"" + std::to_string(job) + "\"";
  for (const auto& [key, v] : s) {
    n += key.rfind(family + "{", 0) == 0 && key.find(label) != std::string::npos ? 1 : 0;
  }
  return n;
}

// The fabric's own series names (everything but the jobs' families and
// the daemon's own), which a failing job source must not change.
std::set<std::string> fabric_series(const Series& s) {
  std::set<std::string> out;
  for (const auto& [key, v] : s) {
    if (key.find("job") != std::string::npos || key.rfind("infiniband_exporter_", 0) == 0) continue;
    if (key.rfind("infiniband_node_info", 0) == 0 || key.rfind("infiniband_port_info", 0) == 0 ||
        key.rfind("infiniband_port_transmit_wait_seconds_total", 0) == 0) {
      out.insert(key);
    }
  }
  return out;
}

// Every query of every panel of the jobs dashboard, with job_id = `job`
// (Grafana's expansion), returns data; the job_id variable offers `job`.
void check_jobs_dashboard(const Prometheus& prom, std::uint64_t job) {
  const Json dash =
      parse_json(read_file(std::string(IBFX_SOURCE_DIR) + "/dashboards/ibfx-jobs.json"));
  REQUIRE(dash["uid"].str() == "ibfx-jobs");
  std::map<std::string, std::string> vars = {
      {"__rate_interval", "10s"}, {"__interval", "1s"}, {"__range", "5m"}};
  for (const Json& v : dash["templating"]["list"].array) {
    if (v["name"].str() != "job_id") continue;
    const auto [selector, label] = parse_label_values(v["query"].str());
    const auto values = prom.label_values(label, selector);
    CHECK(std::find(values.begin(), values.end(), std::to_string(job)) != values.end());
    vars["job_id"] = std::to_string(job);
  }
  REQUIRE(vars.count("job_id") == 1);
  std::size_t queries = 0;
  for (const Json& panel : dash["panels"].array) {
    if (panel["type"].str() == "row") continue;
    for (const Json& t : panel["targets"].array) {
      const std::string expr = expand(t["expr"].str(), vars);
      INFO("panel \"" << panel["title"].str() << "\": " << expr);
      CHECK(expr.find('$') == std::string::npos);
      const Json reply = prom.query(expr);
      INFO(reply["error"].str());
      REQUIRE(reply["status"].str() == "success");
      CHECK_FALSE(samples(reply).empty());
      ++queries;
    }
  }
  CHECK(queries >= 9);
}

// What docs/jobs.md's queries say they return, for the job `job` (the
// page's 4711) that the incast's root (`root_guid`, `root_name` port
// `root_port`) faces; the unrelated job is in no root's tree.
std::vector<DocClaim> jobs_doc_claims(std::uint64_t job, const std::string& root_guid,
                                      const std::string& root_name, int root_port) {
  const std::string id = std::to_string(job);
  const std::map<std::string, std::string> this_job = {{"\"4711\"", "\"" + id + "\""}};
  auto one_series_of_the_job = [id](const std::vector<Sample>& found) {
    REQUIRE(found.size() == 1);
    CHECK(doc_label(found[0], "job_id") == id);
    CHECK(found[0].value >= 0);  // false for NaN
  };
  return {
      // The job's stall seconds per second and its worst port's W: one
      // series each.
      {"docs/jobs.md", "Is the network slowing job 4711, and since when?", this_job,
       one_series_of_the_job},
      {"docs/jobs.md", "Which roots hit it, and what are they?", this_job,
       [=](const std::vector<Sample>& found) {
         // The incast's root, named, with its cause.
         CHECK(std::any_of(found.begin(), found.end(), [&](const Sample& s) {
           return doc_label(s, "node_name") == root_name &&
                  doc_label(s, "port") == std::to_string(root_port) &&
                  doc_label(s, "cause") == "incast";
         }));
         for (const Sample& s : found) CHECK(doc_label(s, "job_id") == id);
       }},
      {"docs/jobs.md",
       "Whose jobs does this root slow down?",
       {{"\"0x...\"", "\"" + root_guid + "\""},
        {"port=\"1\"", "port=\"" + std::to_string(root_port) + "\""}},
       [=](const std::vector<Sample>& found) {
         // The job, with its name and user; not the unrelated one.
         REQUIRE(found.size() == 1);
         CHECK(doc_label(found[0], "job_id") == id);
         CHECK(doc_label(found[0], "job_name") == "train");
         CHECK(!doc_label(found[0], "user").empty());
       }},
  };
}

}  // namespace

TEST_CASE(
    "Slurm jobs on ibsim: joined to the root they face, gone after scancel, kept when "
    "slurmrestd dies",
    "[jobs][slurm][integration]") {
  // gpu0001 and gpu0002 on leaves leaf-r0-01 / leaf-r1-01; gpu0005 on the
  // second leaf of each rail, away from the incast.
  SlurmCluster slurm({"gpu0001", "gpu0002", "gpu0005"});
  const std::uint64_t train = slurm.submit("train", {"gpu0001", "gpu0002"});
  const std::uint64_t other = slurm.submit("other", {"gpu0005"});
  REQUIRE(slurm.wait_state(train, "RUNNING"));
  REQUIRE(slurm.wait_state(other, "RUNNING"));

  Scenario scenario =
      load_scenario(std::string(IBFX_SOURCE_DIR) + "/test/scenarios/tree_incast.yaml");
  scenario.tick = 0.5;
  ScenarioDriver driver(scenario);
  SimFabric sim(driver.fabric());
  auto config = [] {
    return ConfigYaml()
        .scenario_tick()
        .set("scores.saturation_threshold", "0.75")
        .set("jobs.poll_interval", "1s")
        .set("jobs.timeout", "2s");
  };
  const std::string rest_config = config()
                                      .set("jobs.source", "slurmrestd")
                                      .set("jobs.url", slurm.rest_url())
                                      .write(sim.dir() + "/rest.yaml");
  // squeue finds this cluster by SLURM_CONF, which the daemon's
  // environment does not carry: a wrapper sets it.
  const std::string squeue = sim.dir() + "/squeue";
  std::ofstream(squeue) << "#!/bin/sh\nSLURM_CONF='" << slurm.conf_path()
                        << "' exec /usr/bin/squeue \"$@\"\n";
  ::chmod(squeue.c_str(), 0755);
  const std::string squeue_config = config()
                                        .set("jobs.source", "squeue")
                                        .set("jobs.squeue_command", squeue)
                                        .write(sim.dir() + "/squeue.yaml");
  Daemon rest(sim, {"--config.file=" + rest_config, "--sweep.interval=2s"});
  Daemon by_squeue(sim, {"--config.file=" + squeue_config, "--sweep.interval=2s"});
  REQUIRE(rest.wait_ready());
  REQUIRE(by_squeue.wait_ready());
  Prometheus prom(rest.port(),
                  std::string(IBFX_SOURCE_DIR) + "/dashboards/rules/ibfabric_exporter.rules.yaml");

  // Within a poll and a sweep: both jobs, with Slurm's user and partition,
  // and their HCA ports (two rails per host).
  for (Daemon* d : {&rest, &by_squeue}) {
    REQUIRE(d->wait_value(job_info(train, "train"), 1));
    CHECK(d->wait_value(job_key("infiniband_job_hca_ports", train), 4));
    CHECK(d->wait_value(job_key("infiniband_job_hca_ports", other), 2));
    CHECK(d->wait_value("infiniband_exporter_job_source_up", 1));
  }

  // The incast grows from simulated t = 10 s: its root faces gpu0001 mlx5_0.
  const auto trees = driver.congestion_trees();
  REQUIRE(trees.size() == 1);
  const std::string root_prefix = "infiniband_congestion_root_jobs{node_guid=\"" +
                                  guid_of(rest.series(), trees[0].root.node) + "\",port=\"" +
                                  std::to_string(trees[0].root.port) + "\",job_id=\"";
  auto step = [&] {
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& line : driver.step()) sim.console(line);
    std::this_thread::sleep_until(start + std::chrono::milliseconds(500));
  };
  Series s;
  bool joined = false;
  while (driver.time() < 30 && !joined) {
    step();
    if (driver.time() < 12) continue;
    s = rest.series();
    joined = s.count(root_prefix + std::to_string(train) + "\"}") == 1;
  }
  INFO("simulated " << driver.time() << " s");
  REQUIRE(joined);
  // A few more scrapes of the root with the job in Prometheus, the tree
  // still growing: then the dashboard's panels.
  for (int i = 0; i < 6; ++i) step();
  check_jobs_dashboard(prom, train);
  check_doc_claims(prom, {"docs/jobs.md"},
                   jobs_doc_claims(train, guid_of(rest.series(), trees[0].root.node),
                                   trees[0].root.node, trees[0].root.port));
  CHECK(s.at(root_prefix + std::to_string(train) + "\"}") >= 1);
  // The unrelated job is in no root's tree.
  CHECK(series_of_job(s, "infiniband_congestion_root_jobs", other) == 0);
  CHECK(s.count(job_key("infiniband_job_transmit_wait_seconds_total", train)) == 1);
  CHECK(s.count(job_key("infiniband_job_stall_ratio_max", train)) == 1);
  // The congestion event of that root lists the job (and not the other).
  const auto events = nlohmann::json::parse(http_get(rest.port(), "/events").body);
  bool listed = false;
  for (const auto& e : events["events"]) {
    if (e["root"]["node_name"] != trees[0].root.node || e["root"]["port"] != trees[0].root.port) {
      continue;
    }
    const auto& jobs = e["jobs"];
    listed = std::find(jobs.begin(), jobs.end(), train) != jobs.end();
    CHECK(std::find(jobs.begin(), jobs.end(), other) == jobs.end());
  }
  INFO(events.dump(1));
  CHECK(listed);
  // The full exposition with the jobs' families is promtool-clean.
  const std::string path = sim.dir() + "/scrape.prom";
  std::ofstream(path) << rest.metrics();
  const RunResult check = sim.run({"sh", "-c", "promtool check metrics < " + path});
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);

  // scancel: the job's series go, the other job's stay.
  slurm.cancel(train);
  // While Slurm keeps the ended job (MinJobAge, 2 s here), squeue --json
  // lists it with its end_time, and the parser both sources share reads it
  // as an ended job: the squeue source ends a receipt at Slurm's end too.
  std::int64_t ended_at = 0;
  CHECK(eventually(
      [&] {
        const ibfx::JobList slurm_list =
            ibfx::parse_slurm_job_list(slurm.run({"squeue", "--json", "--all"}).out, {});
        for (const ibfx::SlurmJobEnd& e : slurm_list.ended) {
          if (e.job_id == train) ended_at = e.end_time;
        }
        return ended_at > 0;
      },
      std::chrono::seconds(5)));
  CHECK(ended_at >= 1700000000);
  CHECK(eventually([&] {
    const Series now = rest.series();
    return series_of_job(now, "infiniband_job_info", train) +
               series_of_job(now, "infiniband_job_hca_ports", train) +
               series_of_job(now, "infiniband_congestion_root_jobs", train) ==
           0;
  }));
  CHECK(eventually(
      [&] { return series_of_job(by_squeue.series(), "infiniband_job_info", train) == 0; }));
  CHECK(rest.series().count(job_info(other, "other")) == 1);

  // slurmrestd killed mid-run: job_source_up 0, the last good list kept
  // (jobs.grace_period, 1 m), the fabric's series as they were.
  const Series before = rest.series();
  const double last_success =
      before.at("infiniband_exporter_job_source_last_success_timestamp_seconds");
  slurm.kill_slurmrestd();
  REQUIRE(rest.wait_value("infiniband_exporter_job_source_up", 0));
  const Series after = rest.series();
  CHECK(after.count(job_info(other, "other")) == 1);
  CHECK(after.at("infiniband_exporter_job_source_last_success_timestamp_seconds") >= last_success);
  CHECK(fabric_series(after) == fabric_series(before));
  CHECK(rest.process().running());
  const std::string log = rest.process().read_stderr();
  CHECK(log.find("slurmrestd") != std::string::npos);
  // The squeue source does not depend on slurmrestd.
  CHECK(by_squeue.series().at("infiniband_exporter_job_source_up") == 1);
}
