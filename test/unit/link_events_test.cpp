#include "links/link_events.h"

#include <catch2/catch.hpp>

namespace {

using ibfx::LinkCondition;

ibfx::LinkReport ber_link(double ber) {
  ibfx::LinkReport l;
  l.a = {0x100, 3, 0, 2, true};
  l.b = {0x200, 1, 1, 0, true};
  l.into_b = {LinkCondition::kBerError, ber, false, {.symbol = 100}};
  l.condition = LinkCondition::kBerError;
  l.conditions = 1u << static_cast<unsigned>(LinkCondition::kBerError);
  return l;
}

}  // namespace

TEST_CASE("LinkEventTracker: one event per link and condition, with its peak, ended once gone",
          "[links]") {
  ibfx::LinkEventTracker t;
  const std::vector<std::string> names = {"leaf-01", "gpu0 mlx5_0"};
  ibfx::LinkHealthReport r;
  r.links = {ber_link(1e-11)};
  t.observe(r, names, 1000);
  r.links = {ber_link(4e-11)};
  r.links[0].conditions |= 1u << static_cast<unsigned>(LinkCondition::kFlapping);
  r.links[0].downs_last_hour = 2;
  t.observe(r, names, 1010);
  auto events = t.events();
  REQUIRE(events->size() == 2);  // ber_error since 1000, flapping since 1010
  const ibfx::LinkEvent& flapping = (*events)[0];
  CHECK(flapping.condition == LinkCondition::kFlapping);
  CHECK(flapping.start == 1010);
  CHECK(flapping.downs == 2);
  const ibfx::LinkEvent& ber = (*events)[1];
  CHECK(ber.condition == LinkCondition::kBerError);
  CHECK(ber.id == 1);
  CHECK(ber.start == 1000);
  CHECK(ber.last_seen == 1010);
  CHECK(ber.peak_ber == 4e-11);
  CHECK(ber.active());
  // The receiving end first: the errors are counted at gpu0.
  CHECK(ber.node.name == "gpu0 mlx5_0");
  CHECK(ber.node_port == 1);
  CHECK(ber.remote.name == "leaf-01");
  CHECK(ber.remote_port == 3);
  // Healthy again: both end at their last sighting; a new error is a new event.
  r.links.clear();
  t.observe(r, names, 1020);
  events = t.events();
  REQUIRE(events->size() == 2);
  for (const ibfx::LinkEvent& e : *events) {
    CHECK_FALSE(e.active());
    CHECK(*e.end == 1010);
  }
  r.links = {ber_link(1e-11)};
  t.observe(r, names, 1030);
  REQUIRE(t.events()->size() == 3);
  CHECK(t.events()->front().id == 3);
  CHECK(t.events()->front().active());
}

TEST_CASE("LinkEventTracker: the history is bounded in age", "[links]") {
  ibfx::LinkEventTracker t;
  ibfx::LinkHealthReport r;
  r.links = {ber_link(1e-11)};
  t.observe(r, {}, 1000);
  const std::uint64_t v = t.version();
  r.links.clear();
  t.observe(r, {}, 1001);
  CHECK(t.version() > v);
  CHECK(t.events()->size() == 1);
  t.observe(r, {}, 1000 + ibfx::kMaxAgeSeconds + 10);
  CHECK(t.events()->empty());
}
