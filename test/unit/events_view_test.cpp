#include "api/events_view.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "test/support/golden.h"

namespace {

ibfx::CongestionEvent event(std::uint64_t id, double start, std::optional<double> end) {
  ibfx::CongestionEvent e;
  e.id = id;
  e.root = {0x100 + id, "leaf \"" + std::to_string(id) + "\""};
  e.root_port = 3;
  e.start = start;
  e.last_seen = end.value_or(start + 5);
  e.end = end;
  return e;
}

// An active flapping cable without symbol errors and one whose BER was too
// high, ended.
std::pair<ibfx::LinkEvent, ibfx::LinkEvent> flap_and_ber() {
  ibfx::LinkEvent flap;
  flap.id = 4;
  flap.node = {0x200, "gpu0 \"mlx5_0\""};
  flap.node_port = 1;
  flap.remote = {0x100, "leaf-01"};
  flap.remote_port = 9;
  flap.condition = ibfx::LinkCondition::kFlapping;
  flap.start = 950;
  flap.last_seen = 990;
  flap.downs = 3;
  ibfx::LinkEvent ber = flap;
  ber.id = 3;
  ber.condition = ibfx::LinkCondition::kBerError;
  ber.start = 400;
  ber.end = 500.0;
  ber.last_seen = 500;
  ber.peak_ber = 2e-11;
  return {flap, ber};
}

}  // namespace

TEST_CASE("since= is non-negative Unix seconds, anything else a clear error", "[events_view]") {
  std::string error;
  CHECK(ibfx::parse_events_since("1764720000", error) == 1764720000.0);
  CHECK(ibfx::parse_events_since("1764720000.5", error) == 1764720000.5);
  for (const char* bad : {"", "-1", "yesterday", "1e999", "12abc", "nan"}) {
    INFO(bad);
    error.clear();
    CHECK_FALSE(ibfx::parse_events_since(bad, error).has_value());
    CHECK_THAT(error, Catch::StartsWith("since must be Unix seconds"));
  }
}

TEST_CASE("/events lists newest first, since= keeps what was congested at or after it",
          "[events_view]") {
  const ibfx::EventList events{event(3, 900, std::nullopt), event(2, 500, 600.0),
                               event(1, 100, 200.0)};
  const auto all = nlohmann::json::parse(ibfx::render_events_json(events, 1000.0, std::nullopt));
  CHECK(all["sweep_timestamp"] == 1000.0);
  CHECK(all["active"] == 1);
  REQUIRE(all["events"].size() == 3);
  CHECK(all["events"][0]["id"] == 3);
  CHECK(all["events"][0]["state"] == "active");
  CHECK_FALSE(all["events"][0].contains("end"));
  CHECK(all["events"][1]["end"] == 600.0);
  CHECK(all["events"][2]["root"]["node_name"] == "leaf \"1\"");
  // Ended at 600, so congested at 550; ended at 200, not.
  const auto since = nlohmann::json::parse(ibfx::render_events_json(events, 1000.0, 550.0));
  CHECK(since["since"] == 550.0);
  REQUIRE(since["events"].size() == 2);
  CHECK(since["events"][1]["id"] == 2);
  // No event at all, before the first sweep: an empty list, not null.
  const auto none = nlohmann::json::parse(ibfx::render_events_json({}, std::nullopt, std::nullopt));
  CHECK(none["sweep_timestamp"].is_null());
  CHECK(none["events"].is_array());
  CHECK(none["events"].empty());
}

TEST_CASE("/events: link events next to congestion events, each with its kind",
          "[events_view][links]") {
  const ibfx::EventList congestion{event(1, 900, std::nullopt)};
  const auto [flap, ber] = flap_and_ber();
  const auto j = nlohmann::json::parse(
      ibfx::render_events_json(congestion, 1000.0, std::nullopt, {flap, ber}));
  CHECK(j["active"] == 2);
  REQUIRE(j["events"].size() == 3);
  CHECK(j["events"][0]["kind"] == "congestion");
  const auto& f = j["events"][1];
  CHECK(f["kind"] == "link");
  CHECK(f["condition"] == "flapping");
  CHECK(f["state"] == "active");
  CHECK_FALSE(f.contains("end"));
  CHECK(f["node_name"] == "gpu0 \"mlx5_0\"");
  CHECK(f["remote_node_guid"] == "0x0000000000000100");
  CHECK(f["remote_port"] == 9);
  CHECK(f["downs"] == 3);
  CHECK(f["peak_ber"].is_null());
  CHECK(j["events"][2]["peak_ber"] == 2e-11);
  CHECK(j["events"][2]["end"] == 500.0);
  // since= applies to both kinds.
  const auto since =
      nlohmann::json::parse(ibfx::render_events_json(congestion, 1000.0, 600.0, {flap, ber}));
  CHECK(since["events"].size() == 2);
}

TEST_CASE("/events matches its golden file", "[events_view][golden]") {
  // Every field of both kinds: an active congestion event with rails,
  // leaves (one name not UTF-8: untrusted bytes) and jobs, whose tracking
  // (absent_sweeps) /events does not show; an ended one with its leaves
  // truncated; an active link event without symbol errors and an ended one
  // with its peak BER.
  ibfx::CongestionEvent active = event(7, 1000.5, std::nullopt);
  active.far = {0x200, "gpu0 \"mlx5_0\""};
  active.far_port = 1;
  active.cause = ibfx::CongestionCause::kIncast;
  active.last_seen = 1090;
  active.peak_score = 0.75;
  active.peak_at = 1050;
  active.peak_victims = 12;
  active.sweeps = 9;
  active.absent_sweeps = 1;
  active.rails = {0, 2};
  active.leaves = {{0x100, "leaf-01"}, {0x101, "leaf-02 \xff<b>"}};
  active.jobs = {42, 4711};
  active.congested_seconds = 80.25;
  // Its top senders by the routes (issue #41), one with jobs.
  active.senders = {{{0x201, "gpu1 \"mlx5_0\""}, 1, 2.5e10, {4711}},
                    {{0x202, "gpu2 mlx5_0"}, 1, 1.25e9, {}}};
  ibfx::CongestionEvent ended = event(3, 100, 200.0);
  ended.cause = ibfx::CongestionCause::kSlowReceiver;
  ended.peak_score = 0.125;
  ended.peak_at = 150;
  ended.sweeps = 10;
  ended.leaves_truncated = true;
  ended.jobs_truncated = true;
  ended.congested_seconds = 100;
  auto [flap, ber] = flap_and_ber();
  ber.id = 2;
  ber.downs = 0;
  const ibfx::EventList congestion{active, ended};
  const ibfx::LinkEventList links{flap, ber};
  // A re-route (issue #41): leaf-01's port 9 went down and lost its 24
  // destinations, port 10 took them; named by the fabric given.
  ibfx::RouteChange reroute;
  reroute.id = 1;
  reroute.at = 960;
  reroute.destinations_moved = 24;
  reroute.entries_changed = 30;
  reroute.switches_changed = 2;
  reroute.lost = {{0x100, 9, 24, 0, false}};
  reroute.gained = {{0x100, 10, 24, 48, true}};
  ibfx::Fabric fabric;
  fabric.nodes.resize(1);
  fabric.nodes[0].guid = 0x100;
  fabric.index();
  const std::vector<std::string> names{"leaf-01"};
  const std::vector<ibfx::RouteChange> changes{reroute};
  ibfx::test::check_golden(
      "events.json",
      ibfx::render_events_json(congestion, 1100.25, std::nullopt, links, changes, &fabric, &names) +
          ibfx::render_events_json(congestion, std::nullopt, 150.0, links) +
          ibfx::render_events_json({}, std::nullopt, std::nullopt) +
          // since= after the re-route leaves it out.
          ibfx::render_events_json({}, 1100.25, 970.0, {}, changes, &fabric, &names));
}
