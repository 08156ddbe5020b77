#define CATCH_CONFIG_MAIN
#include <atomic>
#include <catch2/catch.hpp>
#include <iostream>

#include "test/sim/sim_fabric.h"

// Every integration test runs on its own SimFabric. A test during which
// opensm or ibsim died without the test stopping them on purpose fails,
// whatever its own checks said: something it ran (usually the daemon) broke
// the subnet manager or the simulator (docs/safety.md). The SimFabric finds
// out at teardown, which for a fabric local to the test case happens before
// the test case ends, so the failure lands on the test that caused it.
namespace {

std::atomic<bool> g_in_test_case{false};

class SimFabricExitListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    TestEventListenerBase::testCaseStarting(info);
    g_in_test_case = true;
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    g_in_test_case = false;
    TestEventListenerBase::testCaseEnded(stats);
  }
};

[[maybe_unused]] const bool g_reporter_installed = [] {
  ibfx::test::SimFabric::set_exit_reporter([](const std::string& what) {
    // Outside a test case (a fabric torn down at exit) there is nothing to
    // fail: say it loudly instead.
    if (g_in_test_case) {
      FAIL_CHECK(what);
    } else {
      std::cerr << what;
    }
  });
  return true;
}();

}  // namespace

CATCH_REGISTER_LISTENER(SimFabricExitListener)
