#include "sweep/sm_guard.h"

#include <catch2/catch.hpp>

#include "test/support/fake_fabric.h"

using namespace ibfx;

// star_fabric: switch 0x100 at LID 1; HCAs 0x200.. at LIDs 2...

TEST_CASE("SmGuard: an empty guard protects nothing", "[sm_guard]") {
  const SmGuard guard;
  CHECK_FALSE(guard.protects(0x100));
  CHECK(guard.nodes().empty());
  CHECK(guard.reason(0x100).empty());
}

TEST_CASE("SmGuard: the node at the master SM's LID, from discovery or the local port",
          "[sm_guard]") {
  Fabric f = test::star_fabric(3);
  SECTION("discovery's MasterSMLID") {
    f.sm_lid = 3;
    const SmGuard guard(f, LocalPort{});
    CHECK(guard.protects(0x201));
    CHECK(guard.nodes().size() == 1);
    CHECK(guard.reason(0x201) == "the master SM's port (MasterSMLID 3)");
  }
  SECTION("the kernel's view of the local port") {
    LocalPort local;
    local.sm_lid = 3;
    const SmGuard guard(f, local);
    CHECK(guard.protects(0x201));
    CHECK(guard.nodes().size() == 1);
  }
  SECTION("an SM on a switch's management port: the switch's LID") {
    f.sm_lid = 1;
    const SmGuard guard(f, LocalPort{});
    CHECK(guard.protects(0x100));
    CHECK(guard.nodes().size() == 1);
  }
  SECTION("both sources, disagreeing while the SM moves: both nodes") {
    f.sm_lid = 3;
    LocalPort local;
    local.sm_lid = 4;
    const SmGuard guard(f, local);
    CHECK(guard.protects(0x201));
    CHECK(guard.protects(0x202));
    CHECK(guard.nodes().size() == 2);
  }
  SECTION("MasterSMLID 0 (no SM yet) matches nobody, not the nodes without a LID") {
    f.nodes[2].lid = 0;
    f.nodes[2].ports[0].lid = 0;
    const SmGuard guard(f, LocalPort{});
    CHECK(guard.nodes().empty());
  }
}

TEST_CASE("SmGuard: any node that runs a subnet manager (IsSM), standby included", "[sm_guard]") {
  Fabric f = test::star_fabric(2);
  f.nodes[2].runs_sm = true;
  const SmGuard guard(f, LocalPort{});
  CHECK(guard.protects(0x201));
  CHECK_FALSE(guard.protects(0x200));
  CHECK(guard.reason(0x201).find("IsSM") != std::string::npos);
}

TEST_CASE("SmGuard: this management node's own HCA, by GUID or by LID", "[sm_guard]") {
  Fabric f = test::star_fabric(4);
  SECTION("discovery's starting node") {
    f.local_node = 0x202;
    const SmGuard guard(f, LocalPort{});
    CHECK(guard.protects(0x202));
    CHECK(guard.nodes().size() == 1);
    CHECK(guard.reason(0x202) == "this management node's own HCA");
  }
  SECTION("the local CA's node GUID") {
    LocalPort local;
    local.node_guid = 0x203;
    const SmGuard guard(f, local);
    CHECK(guard.protects(0x203));
    CHECK(guard.nodes().size() == 1);
  }
  SECTION("the local port's LID range (LMC 1: base LID 4 and 5)") {
    LocalPort local;
    local.base_lid = 4;
    local.lmc = 1;
    const SmGuard guard(f, local);
    CHECK(guard.protects(0x202));  // LID 4
    CHECK(guard.protects(0x203));  // LID 5 is ours too, as seen from here
    CHECK_FALSE(guard.protects(0x201));
    CHECK_FALSE(guard.protects(0x100));
  }
}

TEST_CASE("SmGuard: the usual management node collects every reason, once", "[sm_guard]") {
  // opensm bound to the management HCA the exporter runs on.
  Fabric f = test::star_fabric(2);
  f.local_node = 0x200;
  f.sm_lid = 2;
  f.nodes[1].runs_sm = true;
  LocalPort local;
  local.node_guid = 0x200;
  local.base_lid = 2;
  local.sm_lid = 2;
  const SmGuard guard(f, local);
  REQUIRE(guard.nodes().size() == 1);
  CHECK(guard.reason(0x200) ==
        "the master SM's port (MasterSMLID 2), runs a subnet manager "
        "(PortInfo:CapabilityMask.IsSM), this management node's own HCA");
}
