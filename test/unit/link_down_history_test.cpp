#include "links/link_down_history.h"

#include <catch2/catch.hpp>

TEST_CASE("LinkDownHistory: counts increments in a window, bounded, forgets on restart",
          "[links]") {
  ibfx::LinkDownHistory h;
  CHECK(h.empty());
  h.note(100, 1);
  h.note(200, 2);
  CHECK(h.count(250, 600) == 3);
  CHECK(h.count(250, 100) == 2);  // only those after 150
  CHECK(h.last() == 200);
  h.drop_since(150);  // a restart explains the downs at 200
  CHECK(h.count(250, 600) == 1);
  h.note(300, 100);  // more than it keeps
  CHECK(h.count(300, 600) == ibfx::LinkDownHistory::kKept);
  CHECK(h.count(2000, 600) == 0);
}
