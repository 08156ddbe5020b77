// A receipt's JSON and text forms (receipts/receipt_json.h): the JSON
// round-trips, anything else is refused with a reason and never throws,
// the text form is safe for a terminal.
#include "receipts/receipt_json.h"

#include <catch2/catch.hpp>
#include <string>

using namespace ibfx;

namespace {

JobReceipt sample_receipt() {
  JobReceipt r;
  r.job_id = 4242;
  r.name = "llm \"pretrain\"\n\x1b[2J";
  r.user = "bob";
  r.partition = "gpu";
  r.hosts = {"gpu0001", "gpu0002"};
  r.start = 1700000000.5;
  r.end = 1700021600.25;
  r.end_known = false;
  r.observed_seconds = 21000;
  r.missed_seconds = 599.75;
  r.bytes_sent = 1.5e15;
  r.bytes_received = 1.25e15;
  r.rails = {{0, 7e14, 6e14}, {1, 8e14, 6.5e14}};
  r.cross_spine_share = 0.25;
  r.cross_spine_basis = CrossSpineBasis::kRoutes;
  r.port_seconds = 336000;
  r.stall_seconds = 36960;
  r.worst_port = ReceiptPort{0xabcdef0123456789, 1, "gpu0002", "mlx5_1", 0.31};
  r.worst_minute = 1700003000;
  r.worst_minute_ratio = 0.6;
  r.self_stall_seconds = 3000;
  r.other_jobs_stall_seconds = 30000;
  r.unattributed_stall_seconds = 2000;
  r.outside_trees_stall_seconds = 1960;
  r.culprits = {{4711, 25000}, {4712, 5000}};
  ReceiptLinkIssue l;
  l.port = r.worst_port;
  l.condition = LinkCondition::kFlapping;
  l.downs = 2;
  l.first_seen = 1700001000;
  l.last_seen = 1700002000;
  r.links.push_back(l);
  r.verdict = ReceiptVerdict::kOtherJobs;
  r.line = "network: 11 % of port-time stalled, 8.9 % in trees fed by jobs 4711, 4712";
  return r;
}

}  // namespace

TEST_CASE("Receipt JSON: a receipt round-trips", "[receipts]") {
  const JobReceipt r = sample_receipt();
  const std::string json = receipt_to_json(r);
  JobReceipt back;
  std::string error;
  REQUIRE(receipt_from_json(json, back, error));
  CHECK(error.empty());
  CHECK(receipt_to_json(back) == json);
  CHECK(back.name == r.name);
  CHECK(back.worst_port.guid == r.worst_port.guid);
  CHECK(back.links.at(0).condition == LinkCondition::kFlapping);
  CHECK(back.verdict == ReceiptVerdict::kOtherJobs);
  CHECK_FALSE(back.end_known);
  // A default receipt too.
  REQUIRE(receipt_from_json(receipt_to_json(JobReceipt{}), back, error));
  CHECK(back.verdict == ReceiptVerdict::kNoData);
  // Names are escaped: the line holds no raw control byte.
  CHECK(json.find('\n') == std::string::npos);
  CHECK(json.find('\x1b') == std::string::npos);
}

TEST_CASE("Receipt JSON: anything but a receipt of this version is refused", "[receipts]") {
  const std::string good = receipt_to_json(sample_receipt());
  JobReceipt out;
  std::string error;
  const auto refused = [&](const std::string& text) {
    error.clear();
    const bool ok = receipt_from_json(text, out, error);
    INFO(text.substr(0, 80) << " -> " << error);
    CHECK_FALSE(ok);
    CHECK_FALSE(error.empty());
  };
  refused("");
  refused("{");
  refused("[]");
  refused("null");
  refused(good.substr(0, good.size() / 2));  // a torn line
  auto swap = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  refused(swap("\"version\":1", "\"version\":2"));
  refused(swap("\"job_id\":4242", "\"job_id\":-1"));
  refused(swap("\"job_id\":4242", "\"job_id\":\"4242\""));
  refused(swap("\"hosts\":[\"gpu0001\"", "\"hosts\":[7"));
  refused(swap("\"verdict\":\"other_jobs\"", "\"verdict\":\"maybe\""));
  refused(swap("\"condition\":\"flapping\"", "\"condition\":\"on_fire\""));
  refused(swap("\"cross_spine_basis\":\"routes\"", "\"cross_spine_basis\":\"guess\""));
  refused(swap("\"downs\":2", "\"downs\":1e99"));
  refused(swap("\"user\":\"bob\",", ""));
}

TEST_CASE("Receipt text: the curl form is safe for a terminal", "[receipts]") {
  const std::string text = receipt_to_text(sample_receipt());
  CHECK(text.find("job 4242") != std::string::npos);
  CHECK(text.find("verdict: other_jobs") != std::string::npos);
  CHECK(text.find("job 4711") != std::string::npos);
  CHECK(text.find("flapping, 2 downs") != std::string::npos);
  CHECK(text.find("end not known") != std::string::npos);
  CHECK(text.find("(routes)") != std::string::npos);
  for (const char c : text) CHECK(((c >= ' ' && c <= '~') || c == '\n'));
  // The name's own newline does not start a line.
  CHECK(text.find("\n[2J") == std::string::npos);
}
