#include "jobs/slurm_job_list.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using ibfx::JobList;
using ibfx::JobListLimits;
using ibfx::parse_slurm_job_list;

std::string record(std::uint64_t id, const std::string& state, const std::string& nodes,
                   const std::string& extra = "") {
  return R"({"account":"a","job_id":)" + std::to_string(id) + R"(,"name":"job)" +
         std::to_string(id) + R"(","user_name":"alice","partition":"batch","job_state":")" + state +
         R"(","nodes":")" + nodes + R"(","start_time":1700000000)" + extra + "}";
}

std::string list_of(const std::string& records) {
  return R"({"meta":{"plugin":{"type":"openapi/v0.0.38"}},"errors":[],"jobs":[)" + records + "]}";
}

}  // namespace

TEST_CASE("slurm job list: running jobs with their fields and hosts", "[slurm_job_list]") {
  const JobList list = parse_slurm_job_list(
      list_of(record(11, "RUNNING", "g[00000-00001]") + "," + record(12, "PENDING", "") + "," +
              record(13, "RUNNING", "h01", R"(,"job_resources":{"nodes":"zzz"})")),
      {});
  REQUIRE(list.ok());
  CHECK(list.records == 3);
  REQUIRE(list.jobs.size() == 2);
  CHECK(list.jobs[0].job_id == 11);
  CHECK(list.jobs[0].name == "job11");
  CHECK(list.jobs[0].user == "alice");
  CHECK(list.jobs[0].partition == "batch");
  CHECK(list.jobs[0].start_time == 1700000000);
  CHECK(list.jobs[0].hosts == std::vector<std::string>{"g00000", "g00001"});
  // A nested "nodes" (job_resources.nodes) is not the record's.
  CHECK(list.jobs[1].hosts == std::vector<std::string>{"h01"});
  CHECK(list.bad_records == 0);
}

TEST_CASE("slurm job list: the real squeue --json of Slurm 22.05", "[slurm_job_list]") {
  // Captured from `squeue --json` of Debian 12's Slurm 22.05.8 running two
  // jobs on the integration test's cluster (test/integration/slurm_fixture.h).
  std::ifstream in(IBFX_SOURCE_DIR "/test/data/slurm/squeue_22.05.json");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const JobList list = parse_slurm_job_list(text.str(), {});
  INFO(list.error);
  REQUIRE(list.ok());
  REQUIRE(list.jobs.size() == 2);
  CHECK(list.jobs[0].hosts.size() + list.jobs[1].hosts.size() == 4);
  CHECK(list.jobs[0].start_time > 1600000000);
  CHECK(!list.jobs[0].user.empty());
  CHECK(!list.jobs[0].partition.empty());
}

TEST_CASE("slurm job list: later API versions' state list and start_time object",
          "[slurm_job_list]") {
  const JobList list = parse_slurm_job_list(
      list_of(R"({"job_id":5,"job_state":["RUNNING","COMPLETING"],"nodes":"a[1-2]",)"
              R"("start_time":{"set":true,"infinite":false,"number":1700000123},"name":"x"})"),
      {});
  REQUIRE(list.ok());
  REQUIRE(list.jobs.size() == 1);
  CHECK(list.jobs[0].start_time == 1700000123);
  CHECK(list.jobs[0].hosts.size() == 2);
}

// An ended job stays in Slurm's list for MinJobAge with its end_time: the
// receipts' end. A running or pending job's end_time is its time limit.
TEST_CASE("slurm job list: ended jobs with Slurm's end_time", "[slurm_job_list]") {
  const JobList list = parse_slurm_job_list(
      list_of(record(21, "RUNNING", "a1", R"(,"end_time":1800000000)") + "," +
              record(22, "CANCELLED", "a2", R"(,"end_time":1700000500)") + "," +
              record(23, "PENDING", "", R"(,"end_time":1800000000)") + "," +
              record(24, "COMPLETED", "a3") + "," +
              R"({"job_id":25,"job_state":["TIMEOUT","COMPLETING"],"nodes":"a4",)"
              R"("end_time":{"set":true,"infinite":false,"number":1700000900}})" +
              "," + record(26, "COMPLETING", "a5", R"(,"end_time":1700000600.0)")),
      {});
  REQUIRE(list.ok());
  REQUIRE(list.jobs.size() == 1);
  CHECK(list.jobs[0].job_id == 21);
  CHECK(list.ended ==
        std::vector<ibfx::SlurmJobEnd>{{22, 1700000500}, {25, 1700000900}, {26, 1700000600}});

  JobListLimits one;
  one.max_ended = 1;
  CHECK(parse_slurm_job_list(list_of(record(22, "FAILED", "a2", R"(,"end_time":7)") + "," +
                                     record(23, "FAILED", "a2", R"(,"end_time":8)")),
                             one)
            .ended == std::vector<ibfx::SlurmJobEnd>{{22, 7}});
}

TEST_CASE("slurm job list: bad records are counted and skipped, not fatal", "[slurm_job_list]") {
  const JobList list = parse_slurm_job_list(
      list_of(record(1, "RUNNING", "a[3-1]") + "," + R"({"job_state":"RUNNING","nodes":"a1"})" +
              "," + record(2, "RUNNING", "") + "," + record(3, "RUNNING", "ok1")),
      {});
  REQUIRE(list.ok());
  REQUIRE(list.jobs.size() == 1);
  CHECK(list.jobs[0].job_id == 3);
  CHECK(list.bad_records == 3);
  CHECK(list.first_bad_record ==
        "job 1: nodes: host \"a[3-1]\": invalid range \"3-1\" (end before start)");
}

TEST_CASE("slurm job list: malformed or foreign JSON is a clear error", "[slurm_job_list]") {
  auto error_of = [](const std::string& text) {
    const JobList list = parse_slurm_job_list(text, {});
    CHECK(list.jobs.empty());
    return list.error;
  };
  CHECK(error_of("").find("malformed JSON at byte") == 0);
  CHECK(error_of(R"({"jobs":[{"job_id":1,)").find("malformed JSON") == 0);
  CHECK(error_of("[1,2]") == "expected a JSON object with a \"jobs\" list, got a list");
  CHECK(error_of("42") == "expected a JSON object with a \"jobs\" list, got a single value");
  CHECK(error_of(R"({"meta":{}})") == "no \"jobs\" list in the answer");
  CHECK(error_of(R"({"errors":[{"error":"Invalid user","error_number":1}]})") ==
        "the server answered with an error: \"Invalid user\"");
  CHECK(error_of(list_of(record(1, "RUNNING", "a1")) + "trailing").find("malformed JSON") == 0);
  CHECK(error_of("{\"a\":" + std::string(100, '[')) == "JSON nested deeper than 64 levels");
  // The offending bytes are escaped in the message.
  const std::string control = error_of("{\"jobs\":\x01}");
  CHECK(control.find("malformed JSON") == 0);
  CHECK(control.find('\x01') == std::string::npos);
}

TEST_CASE("slurm job list: bounded by max_jobs and max_hosts", "[slurm_job_list]") {
  // 100k records, of which 2,001 are running: one too many for the default.
  std::string records;
  for (int i = 1; i <= 100'000; ++i) {
    if (i > 1) records += ',';
    records += record(static_cast<std::uint64_t>(i), i % 50 == 0 || i <= 1 ? "RUNNING" : "PENDING",
                      "n[1-2]");
  }
  const std::string text = list_of(records);
  JobListLimits limits;
  const JobList too_many = parse_slurm_job_list(text, limits);
  CHECK(too_many.error == "more than 2000 running jobs (jobs.max_jobs): the list is not used");
  CHECK(too_many.jobs.empty());
  limits.max_jobs = 2001;
  const JobList fits = parse_slurm_job_list(text, limits);
  REQUIRE(fits.ok());
  CHECK(fits.records == 100'000);
  CHECK(fits.jobs.size() == 2001);
  // Hosts over all jobs: a job whose nodes would pass the total is skipped.
  limits.max_hosts = 3;
  const JobList few_hosts = parse_slurm_job_list(text, limits);
  REQUIRE(few_hosts.ok());
  CHECK(few_hosts.jobs.size() == 1);
  CHECK(few_hosts.bad_records == 2000);
  // Kept strings are cut, so a huge job name cannot blow up the exposition.
  limits = {};
  const JobList long_name =
      parse_slurm_job_list(list_of(R"({"job_id":1,"job_state":"RUNNING","nodes":"a","name":")" +
                                   std::string(10000, 'x') + "\"}"),
                           limits);
  REQUIRE(long_name.jobs.size() == 1);
  CHECK(long_name.jobs[0].name.size() == limits.max_field_bytes);
}
