// A state file: written on stop, coalesced while changes come faster than
// its interval, read back, set aside when its owner refuses it, and off
// with an empty directory.
#include "pipeline/state_file.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test/support/temp_dir.h"

namespace ibfx {

TEST_CASE("a state file writes the latest contents, coalescing changes", "[state_file]") {
  const test::TempDir tmp;
  {
    StateFile f(tmp.path(), "x.bin", "things", std::chrono::minutes(1), "ibfx-test");
    CHECK_FALSE(f.read().has_value());  // first start
    f.save([] { return std::string("one"); });
    f.save([] { return std::string("two"); });
    f.save([] { return std::string("three"); });
    f.stop();
    // Within the interval the writer takes the first at once (nothing was
    // written for an interval), then only the newest of the others.
    CHECK(f.writes() >= 1);
    CHECK(f.writes() <= 2);
    CHECK(f.failures() == 0);
    f.save([] { return std::string("after stop"); });  // dropped
  }
  StateFile again(tmp.path(), "x.bin", "things", std::chrono::minutes(1), "ibfx-test");
  CHECK(again.read() == std::optional<std::string>("three"));
  again.set_aside("refused");
  CHECK(std::filesystem::exists(tmp.path() + "/x.bin.bad"));
  CHECK_FALSE(std::filesystem::exists(tmp.path() + "/x.bin"));
}

TEST_CASE("a state file with no directory keeps nothing", "[state_file]") {
  StateFile f("", "x.bin", "things", std::chrono::seconds(1), "ibfx-test");
  CHECK_FALSE(f.read().has_value());
  f.save([] { return std::string("x"); });
  f.stop();
  CHECK(f.writes() == 0);
  CHECK(f.path().empty());
}

}  // namespace ibfx
