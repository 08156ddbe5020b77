// The jobs stage (pipeline/jobs_stage.h): off, it adds nothing; on, each
// sweep gets the source's latest list joined to its analysis; a reload that
// cannot be read keeps the running settings, and turning jobs off hands the
// source back to be stopped off the sweep thread.
#include "pipeline/jobs_stage.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "config/config_error.h"
#include "test/support/fake_fabric.h"
#include "test/support/temp_dir.h"
#include "test/support/wait_for.h"

using namespace ibfx;
using namespace std::chrono_literals;

namespace {

// jobs.source: squeue, with a script that prints Slurm 22.05's example list.
JobsConfig squeue_config(test::TempDir& dir) {
  JobsConfig config;
  config.source = "squeue";
  config.timeout = 5s;
  config.poll_interval = 1h;  // one poll, at start
  config.squeue_command = dir.write(
      "squeue", "#!/bin/sh\ncat '" IBFX_SOURCE_DIR "/test/data/slurm/squeue_22.05.json'\n");
  ::chmod(config.squeue_command.c_str(), 0755);
  return config;
}

}  // namespace

TEST_CASE("JobsStage off: no view, no job ids, nothing to stop", "[jobs_stage]") {
  JobsStage stage(JobsConfig{});
  stage.start();
  const auto fabric = std::make_shared<const Fabric>(test::star_fabric(2));
  const JobsView view = stage.join(fabric, SweepAnalysis{});
  CHECK_FALSE(view.enabled);
  CHECK(JobsStage::root_job_ids(view, SweepAnalysis{}).empty());
  CHECK(stage.apply(stage.prepare_reload(JobsConfig{}), true) == nullptr);
  stage.stop();
}

TEST_CASE("JobsStage on: each sweep joins the source's latest list", "[jobs_stage]") {
  test::TempDir dir;
  JobsStage stage(squeue_config(dir));
  stage.start();
  const auto fabric = std::make_shared<const Fabric>(test::star_fabric(2));
  JobsView view;
  CHECK(test::wait_for([&] {
    view = stage.join(fabric, SweepAnalysis{});
    return view.source_up;
  }));
  CHECK(view.enabled);
  CHECK(view.last_success_seconds > 0);
  CHECK_FALSE(view.join.jobs.empty());
  // No forest: one (empty) list of job ids per root, none.
  CHECK(JobsStage::root_job_ids(view, SweepAnalysis{}).empty());
  stage.stop();
}

TEST_CASE("JobsStage reload: a bad setting keeps the running ones, and off hands the source back",
          "[jobs_stage]") {
  test::TempDir dir;
  JobsConfig config = squeue_config(dir);
  JobsStage stage(config);
  JobsConfig bad = config;
  bad.host_regex = "([";
  CHECK_THROWS_AS(stage.prepare_reload(bad), ConfigError);
  const auto fabric = std::make_shared<const Fabric>(test::star_fabric(2));
  CHECK(stage.join(fabric, SweepAnalysis{}).enabled);

  // The same settings again: the join (and its stall sums) stays.
  CHECK(stage.apply(stage.prepare_reload(config), false) == nullptr);
  CHECK(stage.join(fabric, SweepAnalysis{}).enabled);

  std::unique_ptr<JobSource> retired = stage.apply(stage.prepare_reload(JobsConfig{}), false);
  CHECK(retired != nullptr);
  CHECK_FALSE(stage.join(fabric, SweepAnalysis{}).enabled);
  retired->stop();
}
