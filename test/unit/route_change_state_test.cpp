#include "routing/route_change_state.h"

#include <catch2/catch.hpp>
#include <string>

#include "routing/route_tracker.h"

namespace {

ibfx::RouteChangeState two_changes() {
  ibfx::RouteChangeState s;
  ibfx::RouteChange a;
  a.id = 4;
  a.at = 1764900000.5;
  a.destinations_moved = 12;
  a.entries_changed = 30;
  a.switches_changed = 3;
  a.lost.push_back({0x0002c90300a1b2c3ULL, 17, 12, 0, false});
  a.gained.push_back({0x0002c90300a1b2c3ULL, 18, 12, 24, true});
  ibfx::RouteChange b = a;
  b.id = 5;
  b.at += 60;
  b.lost.clear();
  s.changes = {a, b};
  s.changes_total = 9;
  s.next_id = 6;
  return s;
}

}  // namespace

TEST_CASE("Route events state: a round trip keeps every field", "[routes][route_change_state]") {
  const ibfx::RouteChangeState s = two_changes();
  const std::string text = ibfx::encode_route_change_state(s, 1764900100);
  ibfx::RouteChangeState back;
  std::string error;
  REQUIRE(ibfx::decode_route_change_state(text, back, error));
  CHECK(error.empty());
  CHECK(back.changes_total == 9);
  CHECK(back.next_id == 6);
  REQUIRE(back.changes.size() == 2);
  const ibfx::RouteChange& a = back.changes[0];
  CHECK(a.id == 4);
  CHECK(a.at == 1764900000.5);
  CHECK(a.destinations_moved == 12);
  CHECK(a.entries_changed == 30);
  CHECK(a.switches_changed == 3);
  REQUIRE(a.lost.size() == 1);
  CHECK(a.lost[0].node_guid == 0x0002c90300a1b2c3ULL);
  CHECK(a.lost[0].port == 17);
  CHECK(a.lost[0].before == 12);
  CHECK(a.lost[0].after == 0);
  CHECK_FALSE(a.lost[0].link_up);
  REQUIRE(a.gained.size() == 1);
  CHECK(a.gained[0].link_up);
  CHECK(back.changes[1].lost.empty());
}

TEST_CASE("Route events state: another version, another file or a bad field is refused whole",
          "[routes][route_change_state]") {
  std::string text = ibfx::encode_route_change_state(two_changes(), 1);
  ibfx::RouteChangeState back;
  std::string error;
  std::string other = text;
  other.replace(other.find("\"version\":1"), 11, "\"version\":7");
  CHECK_FALSE(ibfx::decode_route_change_state(other, back, error));
  CHECK(error.find("version 7") != std::string::npos);
  CHECK(back.changes.empty());
  CHECK_FALSE(ibfx::decode_route_change_state("{\"format\": \"something else\"}", back, error));
  CHECK_FALSE(ibfx::decode_route_change_state(text.substr(0, text.size() / 2), back, error));
  CHECK(error.find("not JSON") != std::string::npos);
  std::string bad = text;
  bad.replace(bad.find("\"port\":17"), 9, "\"port\":999");
  CHECK_FALSE(ibfx::decode_route_change_state(bad, back, error));
  CHECK(error.find("changes[0]") == std::string::npos);  // the port's own place is named
  CHECK(error.find("lost[0].port") != std::string::npos);
  CHECK(back.changes.empty());
}

TEST_CASE("RouteTracker restores its re-routes: the newest kept, ids and the total carry on",
          "[routes][route_change_state]") {
  ibfx::RouteChangeState s;
  for (std::uint64_t i = 1; i <= ibfx::kRouteEventsKept + 5; ++i) {
    ibfx::RouteChange c;
    c.id = i;
    c.entries_changed = 1;
    s.changes.push_back(c);
  }
  s.changes_total = s.changes.size();
  s.next_id = 3;  // behind the ids: the ids win
  ibfx::RouteTracker stage;
  stage.restore(s);
  const ibfx::RouteChangeState kept = stage.change_state();
  REQUIRE(kept.changes.size() == ibfx::kRouteEventsKept);
  CHECK(kept.changes.front().id == 6);
  CHECK(kept.changes.back().id == ibfx::kRouteEventsKept + 5);
  CHECK(kept.next_id == ibfx::kRouteEventsKept + 6);
  CHECK(stage.changes_total() == ibfx::kRouteEventsKept + 5);
}
