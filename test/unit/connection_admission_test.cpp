// ConnectionAdmission: the connection cap, the per-client limit, who is
// evicted to make room (the oldest evictable, overall or of the newcomer's
// client), refusal when every connection is busy, and stop().
#include "http/connection_admission.h"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "http/http_session.h"

using namespace ibfx;
using Admission = ConnectionAdmission::Admission;

namespace {

// A session that only records what the server asks of it.
class RecordingSession final : public HttpSession {
 public:
  explicit RecordingSession(boost::asio::io_context& io) : io_(io) {}
  void start() override { ++started; }
  void close() override { ++closed; }
  void evict() override { ++evicted; }
  void reject() override { ++rejected; }
  boost::asio::any_io_executor executor() override { return io_.get_executor(); }
  int started = 0, closed = 0, evicted = 0, rejected = 0;

 private:
  boost::asio::io_context& io_;
};

struct Fixture {
  boost::asio::io_context io;
  std::vector<std::shared_ptr<HttpSession>> sessions;  // by id
  std::vector<std::shared_ptr<HttpSession>> victims;

  Admission admit(ConnectionAdmission& a, const std::string& client) {
    sessions.push_back(std::make_shared<RecordingSession>(io));
    victims.clear();
    return a.admit(sessions.size() - 1, sessions.back(), client, victims);
  }
  bool victim_is(std::size_t id) const { return victims.size() == 1 && victims[0] == sessions[id]; }
};

}  // namespace

TEST_CASE("ConnectionAdmission admits up to the cap, then evicts the oldest idle connection",
          "[connection_admission]") {
  ConnectionAdmission a(3, 0);
  Fixture f;
  for (int i = 0; i < 3; ++i)
    REQUIRE(f.admit(a, "10.0.0." + std::to_string(i)) == Admission::kAdmitted);
  CHECK(f.victims.empty());
  CHECK(a.registered() == 3);

  // Connection 0 starts answering a request (busy), 1 becomes idle again
  // after one: the oldest evictable is now 2, then 1.
  a.set_evictable(0, false);
  a.set_evictable(1, false);
  a.set_evictable(1, true);
  REQUIRE(f.admit(a, "10.0.0.9") == Admission::kAdmitted);
  CHECK(f.victim_is(2));
  REQUIRE(f.admit(a, "10.0.0.9") == Admission::kAdmitted);
  CHECK(f.victim_is(1));
  CHECK(a.evicted() == 2);
  CHECK(a.registered() == 3);
  CHECK(a.refused() == 0);
}

TEST_CASE("ConnectionAdmission refuses a newcomer when every connection is busy",
          "[connection_admission]") {
  ConnectionAdmission a(2, 0);
  Fixture f;
  REQUIRE(f.admit(a, "a") == Admission::kAdmitted);
  REQUIRE(f.admit(a, "b") == Admission::kAdmitted);
  a.set_evictable(0, false);
  a.set_evictable(1, false);
  CHECK(f.admit(a, "c") == Admission::kRefused);
  CHECK(f.victims.empty());
  CHECK(a.refused() == 1);
  CHECK(a.evicted() == 0);
  CHECK(a.registered() == 2);

  // A released connection frees its slot.
  a.release(1);
  CHECK(f.admit(a, "c") == Admission::kAdmitted);
  CHECK(f.victims.empty());
}

TEST_CASE("ConnectionAdmission's per-client limit evicts that client's own oldest connection",
          "[connection_admission]") {
  ConnectionAdmission a(100, 2);
  Fixture f;
  REQUIRE(f.admit(a, "flood") == Admission::kAdmitted);   // 0
  REQUIRE(f.admit(a, "scrape") == Admission::kAdmitted);  // 1
  REQUIRE(f.admit(a, "flood") == Admission::kAdmitted);   // 2
  // The third from "flood" costs "flood" its oldest, never "scrape"'s.
  REQUIRE(f.admit(a, "flood") == Admission::kAdmitted);  // 3
  CHECK(f.victim_is(0));
  // With both its connections busy, "flood" is refused; others are not.
  a.set_evictable(2, false);
  a.set_evictable(3, false);
  CHECK(f.admit(a, "flood") == Admission::kRefused);
  CHECK(f.admit(a, "scrape") == Admission::kAdmitted);
  CHECK(f.victims.empty());
  CHECK(a.evicted() == 1);
  CHECK(a.refused() == 1);
}

TEST_CASE("ConnectionAdmission gives a descriptor back on demand, and admits nothing after stop()",
          "[connection_admission]") {
  ConnectionAdmission a(10, 0);
  Fixture f;
  REQUIRE(f.admit(a, "a") == Admission::kAdmitted);
  REQUIRE(f.admit(a, "b") == Admission::kAdmitted);
  a.set_evictable(0, false);
  f.victims.clear();
  REQUIRE(a.evict_oldest(f.victims));
  CHECK(f.victim_is(1));
  f.victims.clear();
  CHECK_FALSE(a.evict_oldest(f.victims));  // only a busy one is left
  // Releasing an evicted connection again is harmless.
  a.release(1);
  CHECK(a.registered() == 1);

  const auto live = a.stop();
  CHECK(a.stopped());
  REQUIRE(live.size() == 1);
  CHECK(live[0] == f.sessions[0]);
  CHECK(f.admit(a, "c") == Admission::kStopped);
  CHECK(a.registered() == 1);
}

TEST_CASE("ConnectionAdmission does not hand out a session that is already gone",
          "[connection_admission]") {
  ConnectionAdmission a(1, 0);
  Fixture f;
  REQUIRE(f.admit(a, "a") == Admission::kAdmitted);
  f.sessions[0].reset();  // its destructor is running: no one to evict
  REQUIRE(f.admit(a, "b") == Admission::kAdmitted);
  CHECK(f.victims.empty());
  CHECK(a.evicted() == 1);  // its slot was taken back all the same
  CHECK(a.registered() == 1);
}

TEST_CASE("ConnectionAdmission counts open sessions apart from registered ones",
          "[connection_admission]") {
  ConnectionAdmission a(4, 0);
  a.connection_opened();
  a.connection_opened();
  CHECK(a.open_connections() == 2);
  a.connection_closed();
  CHECK(a.open_connections() == 1);
  CHECK(a.registered() == 0);
  // A flood and its end: the count comes back down (the trim is not
  // observable here, only that it does not disturb the count).
  for (std::size_t i = 0; i < ConnectionAdmission::kTrimAfterConnections; ++i)
    a.connection_opened();
  for (std::size_t i = 0; i < ConnectionAdmission::kTrimAfterConnections; ++i)
    a.connection_closed();
  CHECK(a.open_connections() == 1);
}
