// What the publisher renders for the status page: both bodies, text and
// gzip, and the congestion events the snapshot carries.
#include "views/status_page.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test/support/gunzip.h"
#include "test/support/status_support.h"
#include "views/status_html.h"

namespace ibfx {

TEST_CASE("the publisher's status bodies: HTML and JSON, each also as gzip", "[status_page]") {
  const test::StatusFixture fx = test::status_fixture();
  const StatusModel m = daemon_status_model(*fx.snapshot, "/m");
  CHECK(m.telemetry_path == "/m");
  const StatusBodies b = render_status_bodies(m);
  CHECK(b.html.identity == render_status_html(m));
  CHECK(test::gunzip(b.html.gzip) == b.html.identity);
  CHECK(test::gunzip(b.json.gzip) == b.json.identity);
  CHECK(b.html.identity.find("href=\"/m\"") != std::string::npos);
  CHECK(nlohmann::json::accept(b.json.identity));
}

TEST_CASE("the status model carries the snapshot's congestion events", "[status_page]") {
  test::StatusFixture fx = test::status_fixture();
  CongestionEvent active;
  active.id = 2;
  active.root = {0x1000, "leaf-r0-0"};
  active.root_port = 1;
  active.cause = CongestionCause::kIncast;
  active.start = 1790000000;
  active.last_seen = 1790000100;
  active.peak_score = 3.5;
  CongestionEvent ended = active;
  ended.id = 1;
  ended.root.name = "<b>\xFF";
  ended.cause = CongestionCause::kSlowReceiver;
  ended.start = 1789990000;
  ended.end = 1789990500;
  ended.jobs = {17, 4711};
  ended.jobs_truncated = true;
  fx.snapshot->events = std::make_shared<const EventList>(EventList{active, ended});
  const StatusModel m = daemon_status_model(*fx.snapshot, "/metrics");
  REQUIRE(m.events.has_value());
  REQUIRE(m.events->size() == 2);
  CHECK((*m.events)[0].state == "active");
  CHECK((*m.events)[0].cause == "incast");
  CHECK((*m.events)[0].id == 2);
  CHECK_FALSE((*m.events)[0].end.has_value());
  CHECK((*m.events)[0].duration_seconds == 100);
  CHECK((*m.events)[1].state == "ended");
  CHECK((*m.events)[1].name == "<b>\xEF\xBF\xBD");
  CHECK((*m.events)[1].end == 1789990500);
  CHECK((*m.events)[1].jobs == std::vector<std::string>{"17", "4711"});
  CHECK((*m.events)[1].jobs_truncated);
  const std::string html = render_status_html(m);
  CHECK(html.find("<table id=\"events\">") != std::string::npos);
  CHECK(test::unexpected_tag(html).empty());
}

}  // namespace ibfx
