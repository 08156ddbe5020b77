#include "links/link_event_state.h"

#include <catch2/catch.hpp>
#include <string>

#include "test/support/golden.h"

namespace {

using ibfx::LinkCondition;

// A cable whose b end (0x200 port 1, the larger GUID) receives the errors.
ibfx::LinkHealthReport ber_report() {
  ibfx::LinkReport l;
  l.a = {0x100, 3, 0, 2, true};
  l.b = {0x200, 1, 1, 0, true};
  l.into_b = {LinkCondition::kBerError, 3e-11, false, {.symbol = 100}};
  l.condition = LinkCondition::kBerError;
  l.conditions = 1u << static_cast<unsigned>(LinkCondition::kBerError);
  ibfx::LinkHealthReport r;
  r.links = {l};
  return r;
}
const std::vector<std::string> kNames = {"leaf-01", "gpu0 mlx5_0"};

// A tracker that saw the cable err from 1000 to 1010, then a second event
// that ended; its state as a previous run saved it.
ibfx::LinkEventTrackerState saved_state() {
  ibfx::LinkEventTracker t;
  ibfx::LinkHealthReport degraded = ber_report();
  degraded.links[0].condition = LinkCondition::kDegraded;
  degraded.links[0].conditions = 1u << static_cast<unsigned>(LinkCondition::kDegraded);
  degraded.links[0].into_b = {};
  t.observe(degraded, kNames, 990);
  t.observe(ber_report(), kNames, 1000);
  t.observe(ber_report(), kNames, 1010);
  return t.state();
}

}  // namespace

TEST_CASE("Link event state: the file's format matches its golden file and that file loads",
          "[links][golden]") {
  // The file a daemon of this version writes: a change of it is a change of
  // the format, which a daemon reading an older file must still load.
  const ibfx::LinkEventTrackerState s = saved_state();
  ibfx::test::check_golden("link_events_state.json", ibfx::encode_link_event_state(s, 1020));
  const std::string saved = ibfx::test::golden_text("link_events_state.json");
  ibfx::LinkEventTrackerState back;
  std::string error;
  REQUIRE(ibfx::decode_link_event_state(saved, back, error));
  CHECK(back.next_id == s.next_id);
  CHECK(back.events == s.events);
}

TEST_CASE("Link event state: decoded as it was encoded and refused whole when bad", "[links]") {
  const ibfx::LinkEventTrackerState state = saved_state();
  REQUIRE(state.events.size() == 2);
  const std::string text = ibfx::encode_link_event_state(state, 1011);
  ibfx::LinkEventTrackerState back;
  std::string error;
  REQUIRE(ibfx::decode_link_event_state(text, back, error));
  CHECK(back == state);
  CHECK(text.find("\"peak_ber\":null") != std::string::npos);  // the degraded one: no BER

  // Anything but a whole, valid file of this version is refused, with why.
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {text.substr(0, text.size() / 2), "not JSON"},
           {R"({"format": "ibfabric_exporter congestion events", "version": 1})",
            "not a link event state"},
           {R"({"format": "ibfabric_exporter link events", "version": 7})", "version 7"},
           {[&] {
              std::string t = text;
              t.replace(t.find("\"ber_error\""), 11, "\"cosmic\"");
              return t;
            }(),
            "events[0].condition: unknown condition \"cosmic\""}}) {
    INFO(bad);
    ibfx::LinkEventTrackerState s;
    s.next_id = 42;
    std::string e;
    CHECK_FALSE(ibfx::decode_link_event_state(bad, s, e));
    CHECK(e.find(why) != std::string::npos);
    CHECK(s == ibfx::LinkEventTrackerState{});
  }
}

TEST_CASE("Link events restored: ids continue and an active one goes on or ends after the grace",
          "[links]") {
  const ibfx::LinkEventTrackerState state = saved_state();
  constexpr double kRestart = 2000;
  SECTION("the cable still errs after the restart: the same event goes on") {
    ibfx::LinkEventTracker t;
    t.restore(state, kRestart);
    REQUIRE(t.events()->size() == 2);
    // The new run's windows are empty: the condition shows again a few
    // sweeps later, within the grace.
    ibfx::LinkHealthReport none;
    t.observe(none, kNames, kRestart + 1);
    CHECK(t.events()->front().active());
    t.observe(ber_report(), kNames, kRestart + 20);
    const auto events = t.events();
    REQUIRE(events->size() == 2);
    const ibfx::LinkEvent& ber = events->front();
    CHECK(ber.condition == LinkCondition::kBerError);
    CHECK(ber.id == 2);
    CHECK(ber.start == 1000);
    CHECK(ber.last_seen == kRestart + 20);
    CHECK(ber.active());
    // Gone after that: it ends at its last sighting, as without a restart.
    t.observe(none, kNames, kRestart + 30);
    CHECK(*t.events()->front().end == kRestart + 20);
  }
  SECTION("not seen again within the grace: it ends when the saving run last saw it") {
    ibfx::LinkEventTracker t;
    t.restore(state, kRestart);
    ibfx::LinkHealthReport none;
    t.observe(none, kNames, kRestart + ibfx::LinkEventTracker::kRestoredGraceSeconds - 1);
    CHECK(t.events()->front().active());
    t.observe(none, kNames, kRestart + ibfx::LinkEventTracker::kRestoredGraceSeconds);
    const ibfx::LinkEvent& ber = t.events()->front();
    CHECK_FALSE(ber.active());
    CHECK(*ber.end == 1010);
    // A new condition after that is a new event, with the next id.
    t.observe(ber_report(), kNames, kRestart + 100);
    CHECK(t.events()->front().id == 3);
    CHECK(t.events()->front().start == kRestart + 100);
  }
}
