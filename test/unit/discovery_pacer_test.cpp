#include "discovery/discovery_pacer.h"

#include <catch2/catch.hpp>

using namespace ibfx;
using namespace std::chrono_literals;

namespace {
using PacerClock = DiscoveryPacer::Clock;
const PacerClock::time_point kPacerT0 = PacerClock::time_point{} + 1000h;

// A pacer whose first discovery, at kPacerT0, succeeded.
void first_discovery(DiscoveryPacer& pacer) {
  pacer.started(DiscoveryReason::kStartup, kPacerT0);
  pacer.finished(true, false);
}
}  // namespace

TEST_CASE("DiscoveryPacer: schedule, and a partial discovery retried sooner with back-off",
          "[discovery_pacer]") {
  DiscoveryPacer pacer(DiscoveryPacing{.interval = 5min});
  first_discovery(pacer);
  CHECK(pacer.next().at == kPacerT0 + 5min);
  CHECK(pacer.next().reason == DiscoveryReason::kScheduled);

  pacer.started(DiscoveryReason::kScheduled, kPacerT0 + 5min);
  pacer.finished(true, true);
  CHECK(pacer.next().at == kPacerT0 + 5min + 5s);
  CHECK(pacer.next().reason == DiscoveryReason::kPartialRetry);
  auto t = kPacerT0 + 5min + 5s;
  std::chrono::milliseconds expected = 10s;
  for (int i = 0; i < 8; ++i) {
    pacer.started(DiscoveryReason::kPartialRetry, t);
    pacer.finished(true, true);
    CHECK(pacer.next().at - t == expected);
    t += expected;
    expected = std::min<std::chrono::milliseconds>(expected * 2, 5min);
  }
  // Complete again: back to the schedule, and the back-off starts over.
  pacer.started(DiscoveryReason::kPartialRetry, t);
  pacer.finished(true, false);
  CHECK(pacer.next().reason == DiscoveryReason::kScheduled);
  CHECK(pacer.next().at == t + 5min);
  CHECK(pacer.partial_backoff() == 5s);
}

TEST_CASE("DiscoveryPacer: a request every second never makes a discovery storm",
          "[discovery_pacer]") {
  // A LID mismatch (or a link going down) reported by every 1 s sweep for
  // ten minutes, as relentless MAD loss could make it.
  DiscoveryPacer pacer(DiscoveryPacing{.interval = 5min});
  first_discovery(pacer);
  int runs = 0;
  for (int second = 1; second <= 600; ++second) {
    const auto now = kPacerT0 + std::chrono::seconds(second);
    pacer.request(DiscoveryReason::kLidMismatch);
    const auto due = pacer.next();
    if (due.at > now) continue;
    pacer.started(due.reason, now);
    pacer.finished(true, false);
    ++runs;
  }
  // Spaced 3, 6, 12, 24, 48 s, then once a minute: not 200 (one per 3 s).
  CHECK(runs <= 16);
  CHECK(runs >= 10);
  CHECK(pacer.spacing() == 60s);

  // After a quiet spell a request is served after the base spacing again.
  auto quiet = kPacerT0 + 600s + 10min;
  pacer.started(DiscoveryReason::kScheduled, quiet);
  pacer.finished(true, false);
  pacer.request(DiscoveryReason::kLinkDown);
  CHECK(pacer.next().at == quiet + 3s);
  pacer.started(DiscoveryReason::kLinkDown, quiet + 3s);
  CHECK(pacer.spacing() == 3s);
}

TEST_CASE("DiscoveryPacer: the worker's requests are never backed off", "[discovery_pacer]") {
  DiscoveryPacer pacer(DiscoveryPacing{.interval = 5min});
  first_discovery(pacer);
  auto t = kPacerT0;
  for (int i = 0; i < 10; ++i) {  // build up the back-off
    pacer.request(DiscoveryReason::kLidMismatch);
    t = std::max(t + 1s, pacer.next().at);
    pacer.started(DiscoveryReason::kLidMismatch, t);
    pacer.finished(true, false);
  }
  REQUIRE(pacer.spacing() == 60s);
  pacer.request(DiscoveryReason::kWorkerRestart);
  CHECK(pacer.next().reason == DiscoveryReason::kWorkerRestart);
  CHECK(pacer.next().at == t + 3s);
}

TEST_CASE("DiscoveryPacer: until the first success, retry every few seconds", "[discovery_pacer]") {
  DiscoveryPacer pacer(DiscoveryPacing{.interval = 5min});
  CHECK(pacer.next().reason == DiscoveryReason::kStartup);
  pacer.started(DiscoveryReason::kStartup, kPacerT0);
  pacer.finished(false, false);
  CHECK(pacer.next().at == kPacerT0 + 2s);
  CHECK(pacer.next().reason == DiscoveryReason::kStartup);
  CHECK(discovery_reason_name(DiscoveryReason::kPartialRetry) == "partial_retry");
}
