#include "collectors/counter_accumulator.h"

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
  r.set(Counter::kSymbolErrors, 40000, 16);   // 61% of 65535: clear
  r.set(Counter::kLinkDowned, 10, 8);         // 4%: keep
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
