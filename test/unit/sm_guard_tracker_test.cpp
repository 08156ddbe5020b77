// SmGuardTracker: the guard of each sweep, and what is logged about it:
// each guarded node once per reason, the opt-out and an unknown SM LID once.
#include "sweep/sm_guard_tracker.h"

#include <catch2/catch.hpp>
#include <string>

#include "test/support/fake_fabric.h"

using namespace ibfx;

namespace {
bool mentions(const LogLine& line, const std::string& what) {
  return line.text.find(what) != std::string::npos;
}
}  // namespace

// star_fabric: switch 0x100 at LID 1; HCAs 0x200.. at LIDs 2..

TEST_CASE("SmGuardTracker tells once per node and reason what is withheld from whom",
          "[sm_guard_tracker]") {
  Fabric f = test::star_fabric(3);
  f.sm_lid = 3;  // the master SM on gpu1 (0x201)
  SmGuardTracker tracker;
  SmGuardTracker::Result r = tracker.next(f, LocalPort{}, false, {});
  CHECK(r.guard.protects(0x201));
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].level == LogLevel::kInfo);
  CHECK(r.lines[0].text ==
        "not sending optional MADs (the PortSamplesControl probe, counter-group probes, counter "
        "clears) to gpu1 mlx5_0 (" +
            guid_hex(0x201) +
            ", LID 3): the master SM's port (MasterSMLID 3); its counters are read as usual; "
            "counters.probe_sm_and_local_ports allows them");

  // The next sweeps: the same guard, nothing more to say.
  r = tracker.next(f, LocalPort{}, false, {});
  CHECK(r.guard.protects(0x201));
  CHECK(r.lines.empty());

  // A second node joins (this node's own HCA, named by the node-name-map):
  // only it is told.
  f.local_node = 0x202;
  const NodeNameMap names{{0x202, "mgmt01"}};
  r = tracker.next(f, LocalPort{}, false, names);
  REQUIRE(r.lines.size() == 1);
  CHECK(mentions(r.lines[0], "to mgmt01 ("));
  CHECK(mentions(r.lines[0], "this management node's own HCA"));

  // The SM moves to gpu0: told again, for the node whose reason is new.
  f.sm_lid = 2;
  r = tracker.next(f, LocalPort{}, false, names);
  CHECK_FALSE(r.guard.protects(0x201));
  REQUIRE(r.lines.size() == 1);
  CHECK(mentions(r.lines[0], "to gpu0 mlx5_0 ("));

  // It moves back: gpu1 is told again (it was no longer guarded).
  f.sm_lid = 3;
  r = tracker.next(f, LocalPort{}, false, names);
  REQUIRE(r.lines.size() == 1);
  CHECK(mentions(r.lines[0], "to gpu1 mlx5_0 ("));
}

TEST_CASE("SmGuardTracker: the opt-out guards nothing and is warned of once while it lasts",
          "[sm_guard_tracker]") {
  Fabric f = test::star_fabric(2);
  f.sm_lid = 2;
  SmGuardTracker tracker;
  SmGuardTracker::Result r = tracker.next(f, LocalPort{}, true, {});
  CHECK(r.guard.nodes().empty());
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].level == LogLevel::kWarn);
  CHECK(mentions(r.lines[0], "counters.probe_sm_and_local_ports is on"));
  // Every optional MAD the guard would withhold is named, as in the other line.
  CHECK(mentions(r.lines[0], "counter-group probes"));
  CHECK(tracker.next(f, LocalPort{}, true, {}).lines.empty());

  // Opted back in (a reload): the guarded node is told again ...
  r = tracker.next(f, LocalPort{}, false, {});
  CHECK(r.guard.protects(0x200));
  REQUIRE(r.lines.size() == 1);
  CHECK(mentions(r.lines[0], "to gpu0 mlx5_0 ("));
  // ... and opting out once more warns once more.
  r = tracker.next(f, LocalPort{}, true, {});
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].level == LogLevel::kWarn);
}

TEST_CASE("SmGuardTracker warns once that the master SM's LID is unknown", "[sm_guard_tracker]") {
  Fabric f = test::star_fabric(2);  // sm_lid 0, and the local port knows none either
  SmGuardTracker tracker;
  SmGuardTracker::Result r = tracker.next(f, LocalPort{}, false, {});
  CHECK(r.guard.nodes().empty());
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].level == LogLevel::kWarn);
  CHECK(mentions(r.lines[0], "the master SM's LID is unknown"));
  CHECK(tracker.next(f, LocalPort{}, false, {}).lines.empty());

  // Known through the local port: no warning, the SM's node guarded.
  LocalPort local;
  local.sm_lid = 3;
  SmGuardTracker other;
  r = other.next(f, local, false, {});
  CHECK(r.guard.protects(0x201));
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].level == LogLevel::kInfo);
}
