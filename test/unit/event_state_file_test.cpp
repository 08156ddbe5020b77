#include "pipeline/event_state_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

// A fresh directory under /tmp, removed with its contents.
struct StateFileDir {
  std::string path;
  StateFileDir() {
    char tmpl[] = "/tmp/ibfx_state_XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~StateFileDir() { std::filesystem::remove_all(path); }
};

ibfx::EventTrackerState sample_tracker_state() {
  ibfx::EventTrackerState s;
  s.next_id = 3;
  ibfx::CongestionEvent e;
  e.id = 2;
  e.root = {0x100, "leaf-01 <script>"};
  e.root_port = 7;
  e.start = 1764720000;
  e.last_seen = 1764720010;
  e.peak_score = 1.5;
  e.sweeps = 10;
  e.rails = {1};
  s.events.push_back(e);
  s.counters.started[0] = 2;
  s.counters.seconds[0] = 10;
  return s;
}

}  // namespace

TEST_CASE("the event state is saved on stop and restored by the next start", "[event_state_file]") {
  StateFileDir tmp;
  const std::string dir = tmp.path + "/state";  // created by load()
  {
    ibfx::EventStateFile file(dir);
    CHECK_FALSE(file.load().has_value());  // first start
    file.save(sample_tracker_state(), 1764720011);
    file.stop();
    CHECK(file.writes() == 1);
    CHECK(file.failures() == 0);
  }
  struct stat st {};
  REQUIRE(::stat((dir + "/events.json").c_str(), &st) == 0);
  ibfx::EventStateFile again(dir);
  const auto restored = again.load();
  REQUIRE(restored.has_value());
  CHECK(*restored == sample_tracker_state());
}

TEST_CASE("saves that come faster than the write interval are coalesced, the last one wins",
          "[event_state_file]") {
  StateFileDir tmp;
  ibfx::EventStateFile file(tmp.path);
  (void)file.load();
  ibfx::EventTrackerState s = sample_tracker_state();
  for (int i = 0; i < 50; ++i) {
    s.next_id = 3 + static_cast<std::uint64_t>(i);
    file.save(s, 1764720011 + i);
  }
  file.stop();
  // The first save may be written at once, the rest within one interval.
  CHECK(file.writes() <= 2);
  ibfx::EventStateFile again(tmp.path);
  const auto restored = again.load();
  REQUIRE(restored.has_value());
  CHECK(restored->next_id == 52);
}

TEST_CASE("a corrupt state file starts empty and is kept aside, never overwritten unseen",
          "[event_state_file]") {
  StateFileDir tmp;
  std::ofstream(tmp.path + "/events.json") << "{\"format\": \"ibfabric_exporter congestion ev";
  ibfx::EventStateFile file(tmp.path);
  CHECK_FALSE(file.load().has_value());
  std::ifstream bad(tmp.path + "/events.json.bad");
  CHECK(bad.good());
  CHECK_FALSE(std::ifstream(tmp.path + "/events.json").good());
}

TEST_CASE("an unusable state directory costs the persistence, never the start",
          "[event_state_file]") {
  StateFileDir tmp;
  std::ofstream(tmp.path + "/file") << "x";
  // A directory below a regular file can be neither created nor written.
  ibfx::EventStateFile file(tmp.path + "/file/state");
  CHECK_FALSE(file.load().has_value());
  file.save(sample_tracker_state(), 1);
  file.stop();
  CHECK(file.writes() == 0);
  CHECK(file.failures() == 1);
}

TEST_CASE("an empty state directory keeps nothing", "[event_state_file]") {
  ibfx::EventStateFile file("");
  CHECK(file.path().empty());
  CHECK_FALSE(file.load().has_value());
  file.save(sample_tracker_state(), 1);
  file.stop();
  CHECK(file.writes() == 0);
}
