#include "fabric/counter_accumulator.h"

#include <catch2/catch.hpp>

using namespace ibfx;

namespace {
constexpr auto kSym = static_cast<std::size_t>(Counter::kSymbolErrors);
constexpr auto kWait = static_cast<std::size_t>(Counter::kTransmitWait);
constexpr auto kData = static_cast<std::size_t>(Counter::kTransmitDataBytes);

CounterReading reading(Counter c, std::uint64_t v, std::uint8_t bits) {
  CounterReading r;
  r.set(c, v, bits);
  return r;
}
}  // namespace

TEST_CASE("Accumulator starts at the device value and adds deltas", "[accumulator]") {
  CounterAccumulator acc;
  const PortKey k{0xabc, 3};
  acc.apply(k, reading(Counter::kTransmitWait, 100, 32), {});
  CHECK(acc.find(k)->total[kWait] == 100);
  acc.apply(k, reading(Counter::kTransmitWait, 250, 32), {});
  CHECK(acc.find(k)->total[kWait] == 250);
  acc.apply(k, reading(Counter::kTransmitWait, 250, 32), {});
  CHECK(acc.find(k)->total[kWait] == 250);
}

TEST_CASE("Accumulator never decreases on an out-of-band clear", "[accumulator]") {
  CounterAccumulator acc;
  const PortKey k{1, 1};
  acc.apply(k, reading(Counter::kSymbolErrors, 500, 16), {});
  acc.apply(k, reading(Counter::kSymbolErrors, 20, 16), {});  // someone ran perfquery -R
  CHECK(acc.find(k)->total[kSym] == 520);
  CHECK(acc.stats().external_clears[kSym] == 1);
  acc.apply(k, reading(Counter::kSymbolErrors, 25, 16), {});
  CHECK(acc.find(k)->total[kSym] == 525);
}

TEST_CASE("Accumulator counts a saturation once per episode", "[accumulator]") {
  CounterAccumulator acc;
  const PortKey k{1, 1};
  acc.apply(k, reading(Counter::kSymbolErrors, 65000, 16), {});
  acc.apply(k, reading(Counter::kSymbolErrors, 65535, 16), {});
  acc.apply(k, reading(Counter::kSymbolErrors, 65535, 16), {});
  CHECK(acc.stats().saturations[kSym] == 1);
  CHECK(acc.find(k)->total[kSym] == 65535);
}

TEST_CASE("Accumulator asks to clear only narrow counters past the threshold", "[accumulator]") {
  CounterAccumulator acc;
  const PortKey k{1, 1};
  ClearPolicy policy{true, 0.5};
  CounterReading r;
  r.set(Counter::kSymbolErrors, 40000, 16);           // 61% of 65535: clear
  r.set(Counter::kLinkDowned, 10, 8);                 // 4%: keep
  r.set(Counter::kTransmitWait, 3'000'000'000u, 32);  // 70%: clear (CounterSelect2 bit 0)
  r.set(Counter::kTransmitDataBytes, ~0ull - 5, 64);  // 64-bit: never
  const std::uint32_t mask = acc.apply(k, r, policy);
  CHECK(mask == ((1u << 0) | (1u << 16)));

  acc.note_cleared(k, mask);
  CHECK(acc.stats().clears[kSym] == 1);
  CHECK(acc.stats().clears[kWait] == 1);
  // After our own clear the counter restarts: that is a delta, not an external clear.
  CounterReading after;
  after.set(Counter::kSymbolErrors, 7, 16);
  after.set(Counter::kTransmitWait, 11, 32);
  CHECK(acc.apply(k, after, policy) == 0);
  CHECK(acc.find(k)->total[kSym] == 40007);
  CHECK(acc.find(k)->total[kWait] == 3'000'000'011u);
  CHECK(acc.stats().external_clears[kSym] == 0);
}

TEST_CASE("Accumulator does nothing to clear when the policy is off", "[accumulator]") {
  CounterAccumulator acc;
  CHECK(acc.apply(PortKey{1, 1}, reading(Counter::kSymbolErrors, 65535, 16), {}) == 0);
}

TEST_CASE("Accumulator rebases when the source width changes", "[accumulator]") {
  CounterAccumulator acc;
  const PortKey k{1, 1};
  acc.apply(k, reading(Counter::kTransmitDataBytes, 1000, 32), {});
  acc.apply(k, reading(Counter::kTransmitDataBytes, 900000, 64), {});
  CHECK(acc.find(k)->total[kData] == 1000);
  acc.apply(k, reading(Counter::kTransmitDataBytes, 900100, 64), {});
  CHECK(acc.find(k)->total[kData] == 1100);
}

TEST_CASE("Accumulator keeps ports apart by GUID and port", "[accumulator]") {
  CounterAccumulator acc;
  acc.apply(PortKey{1, 1}, reading(Counter::kTransmitWait, 5, 32), {});
  acc.apply(PortKey{1, 2}, reading(Counter::kTransmitWait, 6, 32), {});
  acc.apply(PortKey{2, 1}, reading(Counter::kTransmitWait, 7, 32), {});
  CHECK(acc.size() == 3);
  CHECK(acc.find(PortKey{1, 2})->total[kWait] == 6);
  CHECK(acc.find(PortKey{3, 1}) == nullptr);
}

TEST_CASE("Accumulator keeps error details monotonic and never clears them", "[accumulator]") {
  CounterAccumulator acc;
  const PortKey k{0xabc, 1};
  const auto loc = static_cast<std::size_t>(Counter::kPortLocalPhysicalErrors);
  ClearPolicy clear{true, 0.5};
  // At its 16-bit maximum: counted as a saturation, never put in a clear
  // mask (PortCounters' CounterSelect cannot clear PortRcvErrorDetails).
  CHECK(acc.apply(k, reading(Counter::kPortLocalPhysicalErrors, 0xFFFF, 16), clear) == 0);
  CHECK(acc.stats().saturations[loc] == 1);
  // perfquery -E -R: back to 3. Total grows by 3.
  acc.apply(k, reading(Counter::kPortLocalPhysicalErrors, 3, 16), clear);
  CHECK(acc.find(k)->total[loc] == 0xFFFF + 3);
  CHECK(acc.stats().external_clears[loc] == 1);
  acc.apply(k, reading(Counter::kPortLocalPhysicalErrors, 10, 16), clear);
  CHECK(acc.find(k)->total[loc] == 0xFFFF + 10);
  // A sweep whose group read failed keeps the total.
  acc.apply(k, reading(Counter::kTransmitWait, 1, 32), clear);
  CHECK(acc.find(k)->total[loc] == 0xFFFF + 10);
}

TEST_CASE("Lane accumulator: per-VL totals, width-aware, out-of-band clears", "[accumulator]") {
  CounterAccumulator acc;
  const PortKey k{0xdef, 4};
  const auto vl = static_cast<std::size_t>(LaneCounter::kVlXmitWait);
  LaneReading r;
  r.bits[vl] = 16;
  r.value[vl][0] = 100;
  r.value[vl][3] = 0xFFF0;
  acc.lanes().apply(k, r);
  const LaneAccumulator::State* s = acc.lanes().find(k, LaneCounter::kVlXmitWait);
  REQUIRE(s != nullptr);
  CHECK(s->total[0] == 100);
  CHECK(s->total[3] == 0xFFF0);
  CHECK(acc.lanes().find(k, LaneCounter::kSlRcvFecn) == nullptr);  // never read: no memory

  r.value[vl][0] = 150;
  r.value[vl][3] = 5;  // cleared out of band (perfquery --vlxmitcounters -R)
  acc.lanes().apply(k, r);
  CHECK(s->total[0] == 150);
  CHECK(s->total[3] == 0xFFF0 + 5);
  CHECK(acc.lanes().external_clears()[vl] == 1);

  // A reading without the attribute leaves the totals alone.
  acc.lanes().apply(k, LaneReading{});
  CHECK(s->total[0] == 150);

  // The same attribute read at another width (cannot happen with a fixed
  // IBA layout, but the rule is the per-port one): rebased, no delta.
  r.bits[vl] = 32;
  r.value[vl][0] = 1000;
  acc.lanes().apply(k, r);
  CHECK(s->total[0] == 150);
  r.value[vl][0] = 1010;
  acc.lanes().apply(k, r);
  CHECK(s->total[0] == 160);

  acc.forget(k);
  CHECK(acc.lanes().find(k, LaneCounter::kVlXmitWait) == nullptr);
  CHECK(acc.lanes().size() == 0);
}

TEST_CASE("lane_totals lists ports in fabric order and nothing when no lane group ran",
          "[accumulator]") {
  Fabric f;
  FabricNode a;
  a.guid = 1;
  a.ports.resize(2);
  a.ports[0].number = 1;
  a.ports[1].number = 2;
  FabricNode b = a;
  b.guid = 2;
  f.nodes = {a, b};
  LaneAccumulator lanes;
  CHECK(lane_totals(f, lanes).empty());
  LaneReading r;
  const auto fecn = static_cast<std::size_t>(LaneCounter::kSlRcvFecn);
  r.bits[fecn] = 32;
  r.value[fecn][2] = 9;
  lanes.apply(PortKey{2, 1}, r);
  lanes.apply(PortKey{1, 2}, r);
  const auto t = lane_totals(f, lanes);
  REQUIRE(t.size() == 2);
  CHECK(t[0].port == 1);  // node 1 port 2
  CHECK(t[1].port == 2);  // node 2 port 1
  CHECK(t[1].counter == LaneCounter::kSlRcvFecn);
  CHECK(t[1].total[2] == 9);
}

TEST_CASE("A forgotten port is gone, its slot serves a new port from zero, others stay put",
          "[accumulator]") {
  CounterAccumulator acc;
  const PortKey old_port{0x10, 1};
  const PortKey kept{0x20, 7};
  acc.apply(old_port, reading(Counter::kTransmitWait, 900, 32), {});
  acc.apply(kept, reading(Counter::kTransmitWait, 40, 32), {});
  const CounterAccumulator::State* kept_state = acc.find(kept);
  acc.forget(old_port);
  CHECK(acc.find(old_port) == nullptr);
  CHECK(acc.size() == 1);
  // A new port (the forgotten one's slot is reused) starts at its own
  // device value, with none of the forgotten port's totals or widths.
  const PortKey new_port{0x30, 2};
  acc.apply(new_port, reading(Counter::kSymbolErrors, 5, 16), {});
  CHECK(acc.find(new_port)->total[kWait] == 0);
  CHECK(acc.find(new_port)->bits[kWait] == 0);
  CHECK(acc.find(new_port)->total[kSym] == 5);
  // The forgotten port coming back is new too: its old total is not revived.
  acc.apply(old_port, reading(Counter::kTransmitWait, 950, 32), {});
  CHECK(acc.find(old_port)->total[kWait] == 950);
  // Many more ports later, the kept port's state has not moved.
  for (std::uint64_t g = 1000; g < 21000; ++g) {
    acc.apply(PortKey{g, 1}, reading(Counter::kTransmitWait, g, 32), {});
  }
  CHECK(acc.find(kept) == kept_state);
  CHECK(kept_state->total[kWait] == 40);
  CHECK(acc.size() == 20003);
}
