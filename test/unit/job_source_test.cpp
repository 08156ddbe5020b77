#include "jobs/job_source.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <deque>
#include <fstream>
#include <sstream>

#include "jobs/squeue_runner.h"
#include "test/support/temp_dir.h"

namespace {

using ibfx::JobListFetch;
using ibfx::JobSource;
using namespace std::chrono_literals;

std::string squeue_json() {
  std::ifstream in(IBFX_SOURCE_DIR "/test/data/slurm/squeue_22.05.json");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("job source: up, faults keep the last list for the grace period, then drop it",
          "[job_source]") {
  std::deque<JobListFetch> answers{{squeue_json(), {}},
                                   {{}, "slurmrestd unix:///s: Connection refused"},
                                   {"{not json", {}},
                                   {{}, "slurmrestd unix:///s: HTTP 500"},
                                   {squeue_json(), {}}};
  ibfx::JobsConfig config;
  config.source = "slurmrestd";
  config.grace_period = 1min;
  JobSource source(config, [&] {
    JobListFetch r = answers.front();
    answers.pop_front();
    return r;
  });
  CHECK_FALSE(source.state().up);
  CHECK(source.state().jobs == nullptr);

  const auto t0 = std::chrono::system_clock::time_point(1'700'000'000s);
  source.poll_once(t0);
  auto s = source.state();
  CHECK(s.up);
  REQUIRE(s.jobs);
  CHECK(s.jobs->size() == 2);
  CHECK(s.last_success_seconds == 1'700'000'000.0);
  const auto first = s.jobs;

  source.poll_once(t0 + 10s);  // down: the list stays
  s = source.state();
  CHECK_FALSE(s.up);
  CHECK(s.jobs == first);
  CHECK(s.last_success_seconds == 1'700'000'000.0);
  source.poll_once(t0 + 20s);  // malformed JSON: the same
  CHECK(source.state().jobs == first);
  source.poll_once(t0 + 70s);  // past the grace period: dropped
  s = source.state();
  CHECK_FALSE(s.up);
  CHECK(s.jobs == nullptr);
  CHECK(s.failures == 3);
  source.poll_once(t0 + 80s);  // back
  s = source.state();
  CHECK(s.up);
  REQUIRE(s.jobs);
  CHECK(s.jobs->size() == 2);
  CHECK(s.polls == 5);
}

TEST_CASE("job source: too many running jobs fails the poll", "[job_source]") {
  ibfx::JobsConfig config;
  config.max_jobs = 1;
  JobSource source(config, [] { return JobListFetch{squeue_json(), {}}; });
  source.poll_once();
  CHECK_FALSE(source.state().up);
  CHECK(source.state().jobs == nullptr);
}

TEST_CASE("job source: the thread polls, stop() ends it at once", "[job_source]") {
  ibfx::JobsConfig config;
  config.poll_interval = 1h;
  std::atomic<int> calls{0};
  JobSource source(config, [&] {
    ++calls;
    return JobListFetch{squeue_json(), {}};
  });
  source.start();
  for (int i = 0; i < 500 && !source.state().up; ++i) std::this_thread::sleep_for(10ms);
  CHECK(source.state().up);
  const auto before = std::chrono::steady_clock::now();
  source.stop();
  CHECK(std::chrono::steady_clock::now() - before < 5s);
  CHECK(calls == 1);
}

TEST_CASE("job source: the token file is trimmed, checked, re-read on reload", "[job_source]") {
  ibfx::test::TempDir dir;
  const std::string path = dir.write("jwt", "  eyJhbGciOi.x.y\n");
  CHECK(ibfx::read_slurm_token(path) == "eyJhbGciOi.x.y");
  dir.write("empty", "\n\n");
  CHECK_THROWS_WITH(ibfx::read_slurm_token(dir.path() + "/empty"),
                    dir.path() + "/empty: jobs.token_file: the file is empty");
  dir.write("two", "a\nb\n");
  CHECK_THROWS_WITH(ibfx::read_slurm_token(dir.path() + "/two"),
                    Catch::Contains("white space or control bytes"));
  CHECK_THROWS_AS(ibfx::read_slurm_token(dir.path() + "/missing"), ibfx::ConfigError);

  ibfx::JobsConfig config;
  config.source = "slurmrestd";
  config.url = "http://127.0.0.1:1";
  config.user_name = "u";
  config.token_file = path;
  JobSource source(config);
  config.token_file = dir.path() + "/missing";
  CHECK_THROWS_AS(source.reload(config), ibfx::ConfigError);
}

TEST_CASE("squeue runner: output, exit status and time-out of a real child", "[job_source]") {
  ibfx::test::TempDir dir;
  auto script = [&](const std::string& name, const std::string& body) {
    const std::string path = dir.write(name, "#!/bin/sh\n" + body + "\n");
    ::chmod(path.c_str(), 0755);
    return path;
  };
  ibfx::JobsConfig config;
  config.timeout = 2s;
  // The arguments squeue gets, and its JSON on stdout.
  config.squeue_command =
      script("ok", "[ \"$1 $2\" = '--json --all' ] || exit 3\ncat '" IBFX_SOURCE_DIR
                   "/test/data/slurm/squeue_22.05.json'");
  JobListFetch r = ibfx::SqueueRunner(config).fetch();
  INFO(r.error);
  CHECK(r.ok());
  CHECK(r.body == squeue_json());

  config.squeue_command = script("fails", "echo 'slurm_load_jobs error' >&2; exit 1");
  r = ibfx::SqueueRunner(config).fetch();
  CHECK(r.error == config.squeue_command + " --json: exited with status 1");

  config.squeue_command = dir.path() + "/absent";
  r = ibfx::SqueueRunner(config).fetch();
  CHECK(r.error == config.squeue_command + " --json: exited with status 127");

  config.timeout = 300ms;
  config.squeue_command = script("slow", "exec sleep 30");
  const auto before = std::chrono::steady_clock::now();
  r = ibfx::SqueueRunner(config).fetch();
  CHECK(r.error == config.squeue_command + " --json: no answer within 300ms");
  CHECK(std::chrono::steady_clock::now() - before < 5s);
}
