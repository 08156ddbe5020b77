// The words the views print for PortInfo fields (fabric/fabric.h).
#include <catch2/catch.hpp>

#include "fabric/fabric.h"

TEST_CASE("PortState in words, as ibstat prints it", "[fabric]") {
  CHECK(ibfx::port_state_name(1) == "Down");
  CHECK(ibfx::port_state_name(2) == "Initialize");
  CHECK(ibfx::port_state_name(3) == "Armed");
  CHECK(ibfx::port_state_name(4) == "Active");
  CHECK(ibfx::port_state_name(0) == "unknown");
  CHECK(ibfx::port_state_name(5) == "unknown");
}

TEST_CASE("LinkWidthActive in words", "[fabric]") {
  CHECK(ibfx::link_width_name(2) == "4x");
  CHECK(ibfx::link_width_name(8) == "12x");
}
