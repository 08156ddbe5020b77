// The receipt store (receipts/receipt_store.h): bounded by count and age,
// listed newest first, kept in receipts.jsonl across restarts (a torn or
// bad line skipped), rewritten whole when dead lines pile up.
#include "receipts/receipt_store.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/utc_time.h"
#include "receipts/receipt_json.h"
#include "test/support/temp_dir.h"

using namespace ibfx;
using namespace std::chrono_literals;

namespace {

JobReceipt receipt(std::uint64_t id, double end, std::string user = "alice") {
  JobReceipt r;
  r.job_id = id;
  r.user = std::move(user);
  r.start = end - 600;
  r.end = end;
  r.hosts = {"gpu01"};
  r.line = "network: clean";
  r.verdict = ReceiptVerdict::kClean;
  return r;
}

std::vector<std::string> file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("Receipt store: in memory, bounded by count and by age, listed newest first",
          "[receipts]") {
  ReceiptsConfig config;
  config.keep_count = 3;
  config.keep_age = 1h;
  const double now = 1'700'000'000;
  ReceiptStore store("", config);
  store.add({receipt(1, now - 7200), receipt(2, now - 50, "bob"), receipt(3, now - 40)}, now);
  // Job 1 ended two hours ago: too old.
  CHECK_FALSE(store.find(1));
  REQUIRE(store.find(2));
  CHECK(store.find(2)->user == "bob");
  store.add({receipt(4, now - 30), receipt(5, now - 20)}, now);
  // Three kept: the oldest (2) went.
  CHECK(store.stats().receipts == 3);
  CHECK_FALSE(store.find(2));
  const auto all = store.list({});
  REQUIRE(all.size() == 3);
  CHECK(all[0].job_id == 5);
  CHECK(all[2].job_id == 3);
  CHECK(store.list({"", now - 25, 100}).size() == 1);
  CHECK(store.list({"nobody", 0, 100}).empty());
  CHECK(store.list({"", 0, 2}).size() == 2);
  // The same job again replaces it.
  JobReceipt again = receipt(5, now - 10);
  again.line = "network: later";
  store.add({again}, now);
  CHECK(store.stats().receipts == 3);
  CHECK(store.find(5)->line == "network: later");
  CHECK(store.stats().memory_bytes > 3 * sizeof(JobReceipt));
  config.keep_count = 1;
  store.reload(config);
  CHECK(store.stats().receipts == 1);
}

TEST_CASE("Receipt store: kept across restarts, a torn last line skipped", "[receipts]") {
  test::TempDir dir;
  const double now = unix_seconds_now();
  {
    ReceiptStore store(dir.path(), {});
    store.add({receipt(1, now - 100), receipt(2, now - 90)}, now);
    store.add({receipt(3, now - 80)}, now);
    store.stop();
    CHECK(store.stats().file_bytes > 0);
  }
  CHECK(file_lines(dir.path() + "/receipts.jsonl").size() == 3);
  // A crash mid-append leaves half a line; a bad line is skipped too.
  {
    std::ofstream out(dir.path() + "/receipts.jsonl", std::ios::app);
    out << "{\"version\": 1, \"job_id\": 9}\n";
    out << receipt_to_json(receipt(4, now - 70)).substr(0, 40);
  }
  {
    ReceiptStore store(dir.path(), {});
    CHECK(store.stats().receipts == 3);
    REQUIRE(store.find(3));
    CHECK_FALSE(store.find(4));
    CHECK_FALSE(store.find(9));
    store.add({receipt(5, now - 60)}, now);
    store.stop();
  }
  // Rewritten whole (the bad lines gone), then appended to.
  const auto lines = file_lines(dir.path() + "/receipts.jsonl");
  CHECK(lines.size() == 4);
  for (const std::string& line : lines) {
    JobReceipt r;
    std::string error;
    CHECK(receipt_from_json(line, r, error));
  }
  ReceiptStore store(dir.path(), {});
  CHECK(store.stats().receipts == 4);
  CHECK(store.find(5));
}

TEST_CASE("Receipt store: the file is rewritten when evicted lines pile up", "[receipts]") {
  test::TempDir dir;
  const double now = unix_seconds_now();
  ReceiptsConfig config;
  config.keep_count = 2;
  {
    ReceiptStore store(dir.path(), config);
    for (std::uint64_t id = 1; id <= 10; ++id) {
      store.add({receipt(id, now - 100 + static_cast<double>(id))}, now);
    }
    store.stop();
    CHECK(store.stats().receipts == 2);
  }
  // Never more than twice the kept receipts' lines.
  const auto lines = file_lines(dir.path() + "/receipts.jsonl");
  CHECK(lines.size() <= 4);
  ReceiptStore store(dir.path(), config);
  CHECK(store.stats().receipts == 2);
  CHECK(store.find(10));
  CHECK(store.find(9));
}
