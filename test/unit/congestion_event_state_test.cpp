#include "analysis/congestion_event_state.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "test/support/golden.h"

namespace {

ibfx::EventTrackerState sample_state() {
  ibfx::EventTrackerState s;
  s.next_id = 8;
  s.counters.started[static_cast<std::size_t>(ibfx::CongestionCause::kIncast)] = 5;
  s.counters.seconds[static_cast<std::size_t>(ibfx::CongestionCause::kIncast)] = 123.25;
  ibfx::CongestionEvent active;
  active.id = 7;
  active.root = {0x0002c90300a1b2c3, "leaf-01"};
  active.root_port = 17;
  active.far = {0x0002c90300ffff01, "gpu042 mlx5_3"};
  active.far_port = 1;
  active.cause = ibfx::CongestionCause::kIncast;
  active.start = 1764730380.5;
  active.last_seen = 1764731040.25;
  active.peak_score = 41.75;
  active.peak_at = 1764730800;
  active.peak_victims = 40;
  active.sweeps = 600;
  active.absent_sweeps = 2;
  active.rails = {3};
  active.jobs = {12, 4711};
  active.leaves = {{0x0002c90300a1b2c3, "leaf-01"}, {0x0002c90300a1b2c4, "leaf-02"}};
  active.congested_seconds = 600;
  active.senders = {{{0x0002c90300ffff02, "gpu043 mlx5_3"}, 1, 2.4e10, {4711}}};
  ibfx::CongestionEvent ended = active;
  ended.senders.clear();
  ended.id = 6;
  ended.cause = ibfx::CongestionCause::kSlowReceiver;
  ended.end = ended.last_seen;
  ended.absent_sweeps = 0;
  ended.leaves_truncated = true;
  ended.jobs_truncated = true;
  ended.far = {};
  ended.far_port = 0;
  s.events = {active, ended};
  return s;
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the event state round-trips exactly", "[event_state]") {
  const ibfx::EventTrackerState s = sample_state();
  const std::string text = ibfx::encode_event_state(s, 1764731041);
  CHECK(text.find("\"version\":1") != std::string::npos);
  ibfx::EventTrackerState back;
  std::string error;
  REQUIRE(ibfx::decode_event_state(text, back, error));
  CHECK(back == s);
}

TEST_CASE("the event state file's format matches its golden file and that file loads",
          "[event_state][golden]") {
  // The file a daemon of this version writes: a change of it is a change of
  // the format, which a daemon reading an older file must still load.
  const ibfx::EventTrackerState s = sample_state();
  ibfx::test::check_golden("events_state.json", ibfx::encode_event_state(s, 1764731041));
  const std::string saved = ibfx::test::golden_text("events_state.json");
  ibfx::EventTrackerState back;
  std::string error;
  REQUIRE(ibfx::decode_event_state(saved, back, error));
  CHECK(back == s);
}

TEST_CASE("a state file written before the routes (no senders) still loads", "[event_state]") {
  ibfx::EventTrackerState s = sample_state();
  const std::string text = ibfx::encode_event_state(s, 1764731041);
  nlohmann::json doc = nlohmann::json::parse(text);
  for (auto& e : doc["events"]) e.erase("senders");
  ibfx::EventTrackerState back;
  std::string error;
  REQUIRE(ibfx::decode_event_state(doc.dump(), back, error));
  for (auto& e : s.events) e.senders.clear();
  CHECK(back == s);
  // A sender that is not one is refused, with where.
  doc = nlohmann::json::parse(text);
  doc["events"][0]["senders"][0]["port"] = "one";
  CHECK_FALSE(ibfx::decode_event_state(doc.dump(), back, error));
  CHECK(error.find("senders[0]") != std::string::npos);
}

TEST_CASE("a corrupt state file is refused with the reason, nothing half read", "[event_state]") {
  const std::string good = ibfx::encode_event_state(sample_state(), 1);
  ibfx::EventTrackerState back;
  std::string error;
  SECTION("truncated (a crash of an older, non-atomic writer; a torn copy)") {
    CHECK_FALSE(ibfx::decode_event_state(good.substr(0, good.size() / 2), back, error));
    CHECK(error == "not JSON (truncated or corrupt)");
  }
  SECTION("empty") {
    CHECK_FALSE(ibfx::decode_event_state("", back, error));
    CHECK(error == "not JSON (truncated or corrupt)");
  }
  SECTION("binary garbage") {
    CHECK_FALSE(ibfx::decode_event_state(std::string("\x00\xff\x13garbage", 10), back, error));
  }
  SECTION("some other JSON file") {
    CHECK_FALSE(ibfx::decode_event_state(R"({"groups": []})", back, error));
    CHECK(error == "not a congestion event state file");
  }
  SECTION("a field of the wrong type names the field") {
    CHECK_FALSE(
        ibfx::decode_event_state(replace(good, "\"port\":17", "\"port\":\"17\""), back, error));
    CHECK(error == "events[0].root.port: not a count up to 255");
  }
  SECTION("a port number out of range") {
    CHECK_FALSE(
        ibfx::decode_event_state(replace(good, "\"port\":17", "\"port\":300"), back, error));
    CHECK(error == "events[0].root.port: not a count up to 255");
  }
  SECTION("an unknown cause") {
    CHECK_FALSE(ibfx::decode_event_state(
        replace(good, "\"cause\":\"incast\"", "\"cause\":\"gremlins\""), back, error));
    CHECK(error == "events[0].cause: unknown cause \"gremlins\"");
  }
  SECTION("a missing field") {
    CHECK_FALSE(ibfx::decode_event_state(replace(good, ",\"sweeps\":600", ""), back, error));
    CHECK(error == "events[0].sweeps: missing");
  }
  CHECK(back.events.empty());
  CHECK(back.next_id == 1);
}

TEST_CASE("a state file of another version is refused as a whole", "[event_state]") {
  const std::string good = ibfx::encode_event_state(sample_state(), 1);
  ibfx::EventTrackerState back;
  std::string error;
  CHECK_FALSE(
      ibfx::decode_event_state(replace(good, "\"version\":1", "\"version\":2"), back, error));
  CHECK(error == "version 2, this daemon reads version 1");
  CHECK_FALSE(
      ibfx::decode_event_state(replace(good, "\"version\":1", "\"version\":\"1\""), back, error));
  CHECK(error == "version \"1\", this daemon reads version 1");
  CHECK(back.events.empty());
}

TEST_CASE("untrusted node names: escaped, invalid UTF-8 replaced, never a throw", "[event_state]") {
  ibfx::EventTrackerState s = sample_state();
  s.events[0].root.name = std::string("evil\"</script>\n\xff\xfe", 17);
  const std::string text = ibfx::encode_event_state(s, 1);
  CHECK(text.find("evil\\\"</script>\\n\xef\xbf\xbd\xef\xbf\xbd") != std::string::npos);
  ibfx::EventTrackerState back;
  std::string error;
  REQUIRE(ibfx::decode_event_state(text, back, error));
  CHECK(back.events[0].root.name == "evil\"</script>\n\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("the state file's events: end only once ended and the duration and the tracking",
          "[event_state]") {
  const ibfx::EventTrackerState s = sample_state();
  const nlohmann::json file = nlohmann::json::parse(ibfx::encode_event_state(s, 1));
  const nlohmann::json& active = file["events"][0];
  CHECK(active["state"] == "active");
  CHECK_FALSE(active.contains("end"));
  CHECK(active["absent_sweeps"] == 2);
  CHECK(active["duration_seconds"] == 659.75);
  CHECK(active["root"]["node_guid"] == "0x0002c90300a1b2c3");
  CHECK(active["root"]["remote_node_name"] == "gpu042 mlx5_3");
  const nlohmann::json& ended = file["events"][1];
  CHECK(ended["state"] == "ended");
  CHECK(ended["end"] == 1764731040.25);
  CHECK(ended["absent_sweeps"] == 0);
  CHECK(ended["root"]["remote_node_guid"] == "0x0000000000000000");
}
