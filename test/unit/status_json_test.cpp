// /status.json: valid JSON with the fields issue #27 names, the snapshot's
// sweep time, and hostile names as valid JSON strings.
#include "views/status_json.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "test/support/json_schema.h"
#include "test/support/status_support.h"

using namespace std::string_literals;

namespace ibfx {

TEST_CASE("status.json has the sweep, roots, switches, silent nodes and degraded links",
          "[status_json]") {
  const test::StatusFixture fx = test::status_fixture();
  const std::string text = render_status_json(build_status_model(*fx.snapshot));
  const auto j = nlohmann::json::parse(text);  // throws on invalid JSON
  CHECK(j["sweep"]["timestamp_seconds"] == 1790000000.5);
  CHECK(j["sweep"]["duration_seconds"] == 0.25);
  CHECK(j["sweep"]["nodes_answering"] == fx.snapshot->fabric->nodes.size() - 1);
  REQUIRE(j["roots"].size() == 2);
  const auto& root = j["roots"][0];
  CHECK(root["node_guid"] == guid_hex(fx.snapshot->fabric->nodes[0].guid));
  CHECK(root["node_name"] == "leaf-r0-0");
  CHECK(root["port"] == 1);
  CHECK(root["cause"] == "incast");
  CHECK(root["score"] == 2.0);
  CHECK(root["victims"] == 2);
  CHECK(root["remote_node_name"] == "host0 mlx5_0");
  CHECK(root["remote_port"] == 1);
  CHECK(root["jobs"].is_null());
  REQUIRE(j["switches"].size() == 9);
  bool spine_seen = false;
  for (const auto& sw : j["switches"]) {
    CHECK(sw.contains("node_guid"));
    CHECK(sw.contains("tier"));
    CHECK(sw.contains("rail"));
    CHECK(sw.contains("utilization"));
    if (sw["node_name"] == "spine-r0-0") {
      spine_seen = true;
      CHECK(sw["tier"] == "spine");
      CHECK(sw["rail"].is_null());
      CHECK(sw["stall_ratio"] == 0.5);
      CHECK(sw["port"] == 1);
    }
    if (sw["node_name"] == "leaf-r1-1") {
      CHECK(sw["rail"] == 1);
      CHECK(sw["unit"] == 2);
    }
  }
  CHECK(spine_seen);
  REQUIRE(j["not_answering"].size() == 1);
  CHECK(j["not_answering"][0]["node_name"] == "host1 mlx5_1");
  REQUIRE(j["degraded_links"].size() == 1);
  CHECK(j["degraded_links"][0]["state"] == "degraded");
  CHECK(j["degraded_links"][0]["link_width"] == "1x");
  CHECK(j["events"].is_array());
  CHECK(j["events"].empty());
  CHECK(j["hottest_ports"][0]["stall_ratio"] == 0.5);
}

TEST_CASE("status.json lists unhealthy links, worst first, the receiving end first",
          "[status_json][links]") {
  test::StatusFixture fx = test::status_fixture();
  auto healthy = nlohmann::json::parse(render_status_json(build_status_model(*fx.snapshot)));
  CHECK(healthy["links"].empty());
  CHECK(healthy["links_total"] == 0);
  fx.snapshot->links = test::unhealthy_links(fx);
  const auto j = nlohmann::json::parse(render_status_json(build_status_model(*fx.snapshot)));
  REQUIRE(j["links"].size() == 2);
  CHECK(j["links_total"] == 2);
  const auto& down = j["links"][0];
  CHECK(down["condition"] == "down");
  CHECK(down["conditions"] == nlohmann::json::array({"down", "flapping"}));
  CHECK(down["node_guid"] == "0x000000000000dead");
  CHECK(down["node_name"].is_null());  // no longer in the fabric
  CHECK(down["remote_node_name"] == "leaf-r0-1");
  CHECK(down["downs_last_hour"] == 3);
  CHECK(down["symbol_ber"].is_null());
  const auto& ber = j["links"][1];
  CHECK(ber["condition"] == "ber_error");
  // The errors are counted at host0's receiver: host0 is the node end.
  CHECK(ber["node_name"] == "host0 mlx5_0");
  CHECK(ber["port"] == 1);
  CHECK(ber["remote_node_name"] == "leaf-r0-0");
  CHECK(ber["remote_port"] == 1);
  CHECK(ber["symbol_ber"] == 3e-11);
  CHECK(ber["remote_symbol_ber"] == 2e-15);
  CHECK(ber["since"] == 1790000000);
  CHECK(ber["link_width"] == "4x");
  // The root at leaf-r0-0 port 1 is on that cable: it says so.
  CHECK(j["roots"][0]["node_name"] == "leaf-r0-0");
  CHECK(j["roots"][0]["link_condition"] == "ber_error");
  CHECK(healthy["roots"][0]["link_condition"].is_null());
}

TEST_CASE("status.json lists a length outlier after the unhealthy links, says why, no trouble",
          "[status_json][links][length]") {
  test::StatusFixture fx = test::status_fixture();
  auto links = std::make_shared<LinkHealthReport>(*test::length_outlier_links(fx));
  const LinkReport longer = links->links.back();
  fx.snapshot->links = links;
  const StatusModel m = build_status_model(*fx.snapshot);
  const auto j = nlohmann::json::parse(render_status_json(m));
  REQUIRE(j["links"].size() == 3);
  const auto& l = j["links"][2];
  CHECK(l["condition"] == "length_outlier");
  CHECK(l["conditions"] == nlohmann::json::array({"length_outlier"}));
  CHECK(l["length_reason"] == "round trip 180 ns, its peers' 95 ns");
  CHECK(l["degraded_reason"].is_null());
  CHECK(j["links"][1]["length_reason"].is_null());
  CHECK(test::validates_against(render_status_json(m), IBFX_SOURCE_DIR "/docs/status.schema.json"));
  // Not trouble: a switch whose only listed cable is a length outlier is
  // not marked as having an unhealthy link.
  links->links = {longer};
  const StatusModel alone = build_status_model(*fx.snapshot);
  for (const StatusSwitch& sw : alone.switches) CHECK_FALSE(sw.link_trouble);
  REQUIRE(alone.links.size() == 1);
  CHECK(alone.links[0].condition == "length_outlier");
}

TEST_CASE("status.json keeps hostile names valid and inert", "[status_json]") {
  const test::StatusFixture fx =
      test::status_fixture({{0, "</script>\"\\\0\x1f\xFF\xE2\x80\xA8"s}});
  const std::string text = render_status_json(build_status_model(*fx.snapshot));
  CHECK(text.find('\0') == std::string::npos);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["roots"][0]["node_name"] == "</script>\"\\\0\x1f\xEF\xBF\xBD\xE2\x80\xA8"s);
}

}  // namespace ibfx

namespace ibfx {

// The schema is checked by python3-jsonschema (test/support/json_schema.h),
// as the integration test checks the daemon's own.
TEST_CASE("status.json validates against docs/status.schema.json", "[status_json]") {
  test::StatusFixture fx = test::status_fixture({{0, "<b>\"x\"</b>\xFF"s}});
  StatusModel m = build_status_model(*fx.snapshot);
  m.roots[0].jobs = std::vector<std::string>{"123"};
  StatusEvent event = test::active_status_event();
  m.events = std::vector<StatusEvent>{event};
  StatusEvent ended = event;
  ended.id = 6;
  ended.state = "ended";
  ended.end = 1790000042;
  ended.jobs_truncated = true;
  m.events->push_back(ended);
  const std::string with_extras = render_status_json(m);
  // An event has the names /events gives the same fields.
  const auto events = nlohmann::json::parse(with_extras)["events"];
  REQUIRE(events.size() == 2);
  CHECK(events[0]["id"] == 7);
  CHECK(events[0]["start"] == 1790000000);
  CHECK(events[0]["end"].is_null());
  CHECK(events[0]["peak_victims"] == 12);
  CHECK(events[0]["jobs"] == nlohmann::json::array({"4242", "4243"}));
  CHECK(events[1]["end"] == 1790000042);
  CHECK(events[1]["jobs_truncated"] == true);
  const std::string plain = render_status_json(build_status_model(*fx.snapshot));
  fx.snapshot->links = test::unhealthy_links(fx);
  const std::string with_links = render_status_json(build_status_model(*fx.snapshot));
  fx.snapshot->analysis.result = {};
  const std::string unscored = render_status_json(build_status_model(*fx.snapshot));
  for (const std::string* text : {&with_extras, &plain, &with_links, &unscored}) {
    CHECK(test::validates_against(*text, IBFX_SOURCE_DIR "/docs/status.schema.json"));
  }
}

}  // namespace ibfx
