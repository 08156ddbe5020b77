#include "api/receipt_view.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

// A receipt as the tracker would finish it, by hand.
ibfx::JobReceipt view_receipt(std::uint64_t id, std::string user = "alice") {
  ibfx::JobReceipt r;
  r.job_id = id;
  r.name = "train";
  r.user = std::move(user);
  r.partition = "gpu";
  r.hosts = {"gpu0001", "gpu0002"};
  r.start = 1764763200;
  r.end = 1764766800;
  r.observed_seconds = 3600;
  r.port_seconds = 14400;
  r.stall_seconds = 1584;
  r.other_jobs_stall_seconds = 1296;
  r.self_stall_seconds = 288;
  r.culprits = {{4711, 1296}};
  r.verdict = ibfx::ReceiptVerdict::kOtherJobs;
  r.line = "network: 11 % of port-time stalled, 9 % in trees fed by job 4711";
  return r;
}

nlohmann::json parsed(const ibfx::ReceiptAnswer& a) { return nlohmann::json::parse(a.body); }

}  // namespace

TEST_CASE("receipt_view: job ids and list queries are checked, never echoed", "[receipts]") {
  CHECK(ibfx::parse_job_id("4711") == 4711U);
  CHECK(ibfx::parse_job_id("18446744073709551615") == 18446744073709551615ULL);
  for (const char* bad :
       {"", "0", "012", "-1", "+1", "12ab", "18446744073709551616", "4711/extra", "4711 ", "%34"}) {
    INFO(bad);
    CHECK_FALSE(ibfx::parse_job_id(bad));
  }
  std::string error;
  auto q = ibfx::parse_receipt_query("alice.b-c_d", "1764763200", "10", error);
  REQUIRE(q);
  CHECK(q->user == "alice.b-c_d");
  CHECK(q->since == 1764763200);
  CHECK(q->limit == 10);
  q = ibfx::parse_receipt_query("", "", "", error);
  REQUIRE(q);
  CHECK(q->limit == 100);
  CHECK(q->user.empty());
  for (const auto& [user, since, limit] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"<script>", "", ""},
           {std::string(65, 'a'), "", ""},
           {"", "yesterday", ""},
           {"", "", "0"},
           {"", "", "1001"},
           {"", "", "ten"}}) {
    error.clear();
    CHECK_FALSE(ibfx::parse_receipt_query(user, since, limit, error));
    CHECK_FALSE(error.empty());
    CHECK(error.find("<script>") == std::string::npos);
  }
}

TEST_CASE("receipt_view: errors are JSON or one text line", "[receipts]") {
  const ibfx::ReceiptAnswer json = ibfx::receipt_error(404, "no receipt for job 7", false);
  CHECK(json.status == 404);
  CHECK(json.content_type == "application/json");
  CHECK(parsed(json)["error"] == "no receipt for job 7");
  const ibfx::ReceiptAnswer text = ibfx::receipt_error(400, "bad", true);
  CHECK(text.status == 400);
  CHECK(text.body == "bad\n");
}

TEST_CASE("receipt_view: one receipt as JSON says whether the job still runs", "[receipts]") {
  const ibfx::ReceiptAnswer ended = ibfx::render_receipt(view_receipt(4712), false, false);
  CHECK(ended.status == 200);
  CHECK(ended.content_type == "application/json");
  const nlohmann::json j = parsed(ended);
  CHECK(j["running"] == false);
  CHECK(j["job_id"] == 4712);
  CHECK(j["line"] == view_receipt(4712).line);
  CHECK(parsed(ibfx::render_receipt(view_receipt(4712), true, false))["running"] == true);
  const ibfx::ReceiptAnswer text = ibfx::render_receipt(view_receipt(4712), true, true);
  CHECK(text.content_type.rfind("text/plain", 0) == 0);
  CHECK(text.body.rfind("running: ", 0) == 0);
}

TEST_CASE("receipt_view: the list, JSON and text, with a hostile user made safe", "[receipts]") {
  const std::vector<ibfx::JobReceipt> list = {view_receipt(4712),
                                              view_receipt(4713, "bob\x1b[2J\n\"x")};
  const nlohmann::json j = parsed(ibfx::render_receipt_list(list, false));
  CHECK(j["count"] == 2);
  REQUIRE(j["receipts"].size() == 2);
  CHECK(j["receipts"][1]["user"] == "bob\x1b[2J\n\"x");
  const std::string text = ibfx::render_receipt_list(list, true).body;
  CHECK(text ==
        "4712 other_jobs 2025-12-03 13:00:00 user=alice network: 11 % of port-time stalled, 9 % "
        "in trees fed by job 4711\n"
        "4713 other_jobs 2025-12-03 13:00:00 user=bob\\x1b[2J\\x0a\\x22x network: 11 % of "
        "port-time stalled, 9 % in trees fed by job 4711\n");
  CHECK(ibfx::render_receipt_list({}, true).body.empty());
  CHECK(parsed(ibfx::render_receipt_list({}, false))["count"] == 0);
}

TEST_CASE("receipt_view: /jobs/<id> from the store, else running, else 404", "[receipts]") {
  ibfx::ReceiptsConfig config;
  ibfx::ReceiptStore store("", config);
  store.add({view_receipt(4712)}, 1764766800);
  const auto running = [](std::uint64_t id, ibfx::JobReceipt& out) {
    if (id != 4800) return false;
    out = view_receipt(4800);
    return true;
  };
  ibfx::ReceiptAnswer a = ibfx::serve_jobs({"/jobs/4712", "", "", "", ""}, store, running, true);
  CHECK(a.status == 200);
  CHECK(parsed(a)["running"] == false);
  a = ibfx::serve_jobs({"/jobs/4800", "", "", "", "text"}, store, running, true);
  CHECK(a.status == 200);
  CHECK(a.body.rfind("running: ", 0) == 0);
  a = ibfx::serve_jobs({"/jobs/4999", "", "", "", ""}, store, running, true);
  CHECK(a.status == 404);
  CHECK(parsed(a)["error"].get<std::string>().find("4999") != std::string::npos);
  a = ibfx::serve_jobs({"/jobs/4999", "", "", "", ""}, store, running, false);
  CHECK(parsed(a)["error"].get<std::string>().find("off") != std::string::npos);
  a = ibfx::serve_jobs({"/jobs/<b>", "", "", "", ""}, store, running, true);
  CHECK(a.status == 400);
  CHECK(a.body.find("<b>") == std::string::npos);
  a = ibfx::serve_jobs({"/jobs/4712", "", "", "", "xml"}, store, running, true);
  CHECK(a.status == 400);
  a = ibfx::serve_jobs({"/jobs", "alice", "", "", ""}, store, running, true);
  CHECK(a.status == 200);
  CHECK(parsed(a)["count"] == 1);
  a = ibfx::serve_jobs({"/jobs", "carol", "", "", ""}, store, running, true);
  CHECK(parsed(a)["count"] == 0);
  a = ibfx::serve_jobs({"/jobs", "", "", "5000", ""}, store, running, true);
  CHECK(a.status == 400);
}
