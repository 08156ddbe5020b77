#include "pipeline/receipts_stage.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/utc_time.h"
#include "test/support/temp_dir.h"

// Times a few minutes ago: the store keeps receipts receipts.keep_age
// back from the real clock, so a restart must find them within it.
const double kStageT0 = std::floor(ibfx::unix_seconds_now()) - 600;

namespace {

ibfx::Config receipts_config(bool jobs_on, bool receipts_on = true) {
  ibfx::Config c;
  c.jobs.source = jobs_on ? "slurmrestd" : "none";
  c.receipts.enabled = receipts_on;
  return c;
}

std::shared_ptr<const std::vector<ibfx::SlurmJob>> job_list(std::vector<std::uint64_t> ids) {
  auto list = std::make_shared<std::vector<ibfx::SlurmJob>>();
  for (const std::uint64_t id : ids) {
    ibfx::SlurmJob j;
    j.job_id = id;
    j.name = "train";
    j.user = "alice";
    j.partition = "gpu";
    j.hosts = {"gpu0001"};
    j.start_time = static_cast<std::int64_t>(kStageT0);
    list->push_back(std::move(j));
  }
  return list;
}

// One sweep at `now`, the job source polled then and listing `ids`.
ibfx::ReceiptSweepInput sweep(double now, std::vector<std::uint64_t> ids) {
  ibfx::ReceiptSweepInput in;
  in.now = now;
  in.jobs = job_list(std::move(ids));
  in.jobs_polled_at = now;
  in.source_up = true;
  return in;
}

std::uint64_t receipts_total(const ibfx::ReceiptsView& v) {
  std::uint64_t n = 0;
  for (const std::uint64_t c : v.finished) n += c;
  return n;
}

}  // namespace

TEST_CASE("ReceiptsStage is off without a job source or with receipts.enabled false",
          "[receipts]") {
  for (const auto& config : {receipts_config(false), receipts_config(true, false)}) {
    ibfx::ReceiptsStage stage(config);
    CHECK_FALSE(stage.on());
    stage.observe(sweep((kStageT0 + 200), {4711}));
    stage.observe(sweep((kStageT0 + 260), {}));
    CHECK_FALSE(stage.view().enabled);
    CHECK(receipts_total(stage.view()) == 0);
    CHECK(stage.stats().running == 0);
    ibfx::JobReceipt r;
    CHECK_FALSE(stage.peek(4711, (kStageT0 + 260), r));
    REQUIRE(stage.store() != nullptr);
    CHECK_FALSE(stage.store()->find(4711));
  }
}

TEST_CASE("ReceiptsStage: a running job is peeked at, its end goes to the store and the counters",
          "[receipts]") {
  ibfx::ReceiptsStage stage(receipts_config(true));
  REQUIRE(stage.on());
  CHECK(stage.view().enabled);
  CHECK(receipts_total(stage.view()) == 0);
  stage.observe(sweep((kStageT0 + 200), {4711, 4712}));
  stage.observe(sweep((kStageT0 + 260), {4711, 4712}));
  CHECK(stage.stats().running == 2);
  ibfx::JobReceipt r;
  REQUIRE(stage.peek(4711, (kStageT0 + 260), r));
  CHECK(r.job_id == 4711);
  CHECK_FALSE(stage.peek(9999, (kStageT0 + 260), r));
  // 4711 leaves the running list at a newer poll: finished.
  stage.observe(sweep((kStageT0 + 320), {4712}));
  CHECK(stage.stats().running == 1);
  CHECK(receipts_total(stage.view()) == 1);
  const auto stored = stage.store()->find(4711);
  REQUIRE(stored);
  CHECK(stored->hosts == std::vector<std::string>{"gpu0001"});
  CHECK(stage.view().finished[static_cast<std::size_t>(stored->verdict)] == 1);
  CHECK(stage.stats().stored == 1);
  CHECK_FALSE(stage.peek(4711, (kStageT0 + 320), r));

  // Jobs turned off by a reload: the running job is dropped, not finished.
  stage.reload(receipts_config(false));
  CHECK_FALSE(stage.on());
  CHECK(stage.stats().running == 0);
  CHECK(stage.store()->find(4711));
  CHECK_FALSE(stage.store()->find(4712));
}

TEST_CASE("ReceiptsStage keeps receipts and running jobs across a restart", "[receipts]") {
  ibfx::test::TempDir dir;
  {
    ibfx::ReceiptsStage stage(receipts_config(true));
    stage.keep_in(dir.path());
    stage.observe(sweep((kStageT0 + 200), {4711, 4712}));
    stage.observe(sweep((kStageT0 + 260), {4712}));
    REQUIRE(stage.store()->find(4711));
    stage.stop();
    CHECK(stage.stats().write_failures == 0);
  }
  ibfx::ReceiptsStage again(receipts_config(true));
  again.keep_in(dir.path());
  CHECK(again.store()->find(4711));
  // 4712 was running: restored, and its receipt finished when it ends.
  CHECK(again.stats().running == 1);
  ibfx::JobReceipt r;
  CHECK(again.peek(4712, (kStageT0 + 300), r));
  again.observe(sweep((kStageT0 + 320), {}));
  const auto ended = again.store()->find(4712);
  REQUIRE(ended);
  CHECK(ended->missed_seconds > 0);
}
