// libFuzzer target: everything that reads bytes a switch or HCA sent us.
//
// Even first byte: the PMA decoders on one MAD (the rest of the input), with
// capability masks taken from bytes 1..6 and, separately, from the MAD
// itself decoded as ClassPortInfo, and the SMP decoders (NodeInfo,
// SwitchInfo, LinearForwardingTable) on the same data area. Odd first byte: the MadEngine driven by
// a transport whose every answer is chosen by the fuzzer (matching, stale and unknown TIDs, odd
// statuses, kernel send failures, local send errors). The engine's contract is that every submitted
// request completes exactly once, so callers can account for every port; a broken count is a
// finding just like a crash (__builtin_trap makes libFuzzer keep the input).
#include <fuzzer/FuzzedDataProvider.h>
#include <infiniband/mad.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "mad/mad_engine.h"
#include "mad/mad_transport.h"
#include "mad/pma.h"
#include "mad/smp_switch.h"

namespace {

using ibfx::Counter;
using ibfx::CounterReading;
using ibfx::MadBytes;
using ibfx::MadCompletion;
using ibfx::MadEngine;
using ibfx::MadEngineLimits;
using ibfx::MadResult;
using ibfx::PmaCapabilities;
using ibfx::PmaData;
using ibfx::Received;

// A decoded value must fit the field it came from: the accumulator computes
// wrap-around deltas from the width, so a wider value would corrupt totals.
void check_reading(const CounterReading& reading) {
  for (std::size_t i = 0; i < ibfx::kCounterCount; ++i) {
    const std::uint8_t bits = reading.bits[i];
    if (bits > 64) __builtin_trap();
    if (bits != 0 && bits < 64 && (reading.value[i] >> bits) != 0) __builtin_trap();
  }
}

void decode_all(const PmaData& data, const PmaCapabilities& caps) {
  CounterReading narrow;
  ibfx::decode_port_counters(data, caps, narrow);
  check_reading(narrow);
  CounterReading extended;
  ibfx::decode_port_counters_ext(data, caps, extended);
  check_reading(extended);
  // The sweeper merges both attributes into one reading.
  ibfx::decode_port_counters_ext(data, caps, narrow);
  check_reading(narrow);
  (void)ibfx::decoded_port_select(data);
  (void)ibfx::decode_sample_tick(data);
}

void fuzz_decoders(FuzzedDataProvider& in) {
  PmaCapabilities given;
  given.cap_mask = in.ConsumeIntegral<std::uint16_t>();
  given.cap_mask2 = in.ConsumeIntegral<std::uint32_t>();
  MadBytes mad{};
  const std::vector<std::uint8_t> bytes = in.ConsumeBytes<std::uint8_t>(mad.size());
  std::copy(bytes.begin(), bytes.end(), mad.begin());
  (void)ibfx::mad_tid(mad);
  (void)ibfx::mad_attr_id(mad);
  (void)ibfx::mad_status(mad);
  (void)ibfx::mad_method(mad);
  const PmaData data = ibfx::pma_data(mad);
  decode_all(data, given);
  decode_all(data, ibfx::decode_class_port_info(data));
  PmaCapabilities all;
  all.cap_mask = 0xFFFF;
  all.cap_mask2 = 0xFFFFFFFF;
  decode_all(data, all);
  decode_all(data, PmaCapabilities{});
  // The route reader's SMP decoders (mad/smp_switch.h): the LinearFDBTop it
  // sizes a table by must stay within the unicast LIDs and the cap, or a
  // garbled SwitchInfo would make it allocate and ask for blocks no table
  // has.
  const ibfx::SmpSwitchInfo info = ibfx::decode_smp_switch_info(data);
  const std::uint16_t top = info.usable_top();
  if (top > ibfx::kMaxUnicastLid) __builtin_trap();
  if (info.linear_fdb_cap > 0 && top >= info.linear_fdb_cap) __builtin_trap();
  if (ibfx::lft_blocks(top) > ibfx::lft_blocks(ibfx::kMaxUnicastLid)) __builtin_trap();
  const ibfx::LftBlock block = ibfx::decode_smp_lft_block(data);
  if (!std::equal(block.begin(), block.end(), data.begin())) __builtin_trap();
  (void)ibfx::decode_smp_node_info(data);
}

// Answers are read from the fuzz input on each receive(); once the input is
// used up it answers outstanding requests in order, so a run ends quickly
// instead of waiting out real per-MAD timeouts.
class FuzzTransport final : public ibfx::MadTransport {
 public:
  explicit FuzzTransport(FuzzedDataProvider& in) : in_(in) {}

  bool send(std::uint16_t, const MadBytes& mad, std::chrono::milliseconds) override {
    if (fail_next_send_) {
      fail_next_send_ = false;
      return false;
    }
    sent_.push_back(mad);
    // Bound memory on long inputs; dropped entries are simply never answered.
    if (sent_.size() > 1024) sent_.pop_front();
    return true;
  }

  Received receive(std::chrono::milliseconds) override {
    Received r;
    if (in_.remaining_bytes() == 0) {
      if (sent_.empty()) return r;
      r.kind = Received::Kind::kResponse;
      r.mad = sent_.front();
      sent_.pop_front();
      mad_set_field(r.mad.data(), 0, IB_MAD_METHOD_F, 0x81);  // GetResp
      return r;
    }
    switch (in_.ConsumeIntegralInRange<int>(0, 6)) {
      case 0:  // nothing arrived within the wait
        return r;
      case 1:    // an answer to an outstanding (or already answered) request
      case 2: {  // the same request answered twice: the duplicate must be ignored
        if (sent_.empty()) return r;
        const std::size_t index = in_.ConsumeIntegralInRange<std::size_t>(0, sent_.size() - 1);
        r.kind = Received::Kind::kResponse;
        r.mad = sent_[index];
        mad_set_field(r.mad.data(), 0, IB_MAD_METHOD_F, 0x81);
        if (in_.ConsumeBool()) {
          mad_set_field(r.mad.data(), 0, IB_MAD_STATUS_F, in_.ConsumeIntegral<std::uint16_t>());
        }
        if (in_.ConsumeBool()) {
          mad_set_field(r.mad.data(), 0, IB_MAD_ATTRID_F, in_.ConsumeIntegral<std::uint16_t>());
        }
        fill_data(r.mad);
        if (in_.ConsumeBool()) sent_.erase(sent_.begin() + static_cast<std::ptrdiff_t>(index));
        return r;
      }
      case 3: {  // the kernel hands a request back (its own timeout)
        if (sent_.empty()) return r;
        const std::size_t index = in_.ConsumeIntegralInRange<std::size_t>(0, sent_.size() - 1);
        r.kind = Received::Kind::kSendFailed;
        r.mad = sent_[index];
        sent_.erase(sent_.begin() + static_cast<std::ptrdiff_t>(index));
        return r;
      }
      case 4: {  // a MAD with a TID we never used (another agent, a late retry)
        r.kind = in_.ConsumeBool() ? Received::Kind::kResponse : Received::Kind::kSendFailed;
        mad_set_field64(r.mad.data(), 0, IB_MAD_TRID_F, in_.ConsumeIntegral<std::uint64_t>());
        mad_set_field(r.mad.data(), 0, IB_MAD_STATUS_F, in_.ConsumeIntegral<std::uint16_t>());
        fill_data(r.mad);
        return r;
      }
      case 5:  // the next send fails locally (no address handle, ENOMEM...)
        fail_next_send_ = true;
        return r;
      default: {  // raw bytes, whatever they claim to be
        r.kind = Received::Kind::kResponse;
        const std::vector<std::uint8_t> bytes = in_.ConsumeBytes<std::uint8_t>(r.mad.size());
        std::copy(bytes.begin(), bytes.end(), r.mad.begin());
        return r;
      }
    }
  }

 private:
  void fill_data(MadBytes& mad) {
    const std::size_t n = in_.ConsumeIntegralInRange<std::size_t>(0, ibfx::kPmaDataSize);
    const std::vector<std::uint8_t> bytes = in_.ConsumeBytes<std::uint8_t>(n);
    std::copy(bytes.begin(), bytes.end(), mad.begin() + ibfx::kPmaDataOffset);
  }

  FuzzedDataProvider& in_;
  std::deque<MadBytes> sent_;
  bool fail_next_send_ = false;
};

constexpr std::size_t kMaxRequests = 256;

struct EngineRun {
  FuzzedDataProvider& in;
  MadEngine& engine;
  std::vector<int> calls;  // callbacks run, per submitted request

  void submit() {
    if (calls.size() >= kMaxRequests) return;
    const std::size_t id = calls.size();
    calls.push_back(0);
    const auto lid = in.ConsumeIntegralInRange<std::uint16_t>(1, 8);
    const std::uint8_t method = in.ConsumeBool() ? 0x01 : 0x02;  // Get / Set
    const std::uint16_t attr =
        in.PickValueInArray({ibfx::kAttrClassPortInfo, ibfx::kAttrPortSamplesControl,
                             ibfx::kAttrPortCounters, ibfx::kAttrPortCountersExtended});
    const auto port = in.ConsumeIntegral<std::uint8_t>();
    engine.submit(lid, method, attr, port, ibfx::port_counters_request(port),
                  [this, id](const MadCompletion& completion) { complete(id, completion); });
  }

  void complete(std::size_t id, const MadCompletion& completion) {
    if (++calls[id] != 1) __builtin_trap();  // completed twice
    if (completion.result == MadResult::kOk && completion.mad_status != 0) __builtin_trap();
    if (completion.result == MadResult::kOk) {
      decode_all(completion.data, ibfx::decode_class_port_info(completion.data));
    }
    // Callbacks may queue follow-up work (the sweeper reads counters after
    // ClassPortInfo, clears after a read); that path must be safe too.
    if (in.remaining_bytes() > 0 && in.ConsumeIntegralInRange<int>(0, 3) == 0) submit();
  }
};

void fuzz_engine(FuzzedDataProvider& in) {
  using Clock = std::chrono::steady_clock;
  MadEngineLimits limits;
  limits.global_inflight = in.ConsumeIntegralInRange<int>(1, 16);
  limits.per_node_inflight = in.ConsumeIntegralInRange<int>(1, 8);
  // Real-time timeouts: keep them tiny so timeout/retry paths run within an
  // iteration instead of stalling the fuzzer.
  limits.timeout = std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(0, 2));
  limits.retries = in.ConsumeIntegralInRange<int>(0, 3);
  // Mostly unlimited (also when the input is short): a low rate only spins
  // until the budget below runs out.
  limits.max_mads_per_second = in.ConsumeBool() ? in.ConsumeIntegralInRange<int>(1, 1000000) : 0;
  const auto budget = std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(1, 20));

  FuzzTransport transport(in);
  MadEngine engine(transport, limits);
  EngineRun run{in, engine, {}};
  const int initial = in.ConsumeIntegralInRange<int>(1, 32);
  for (int i = 0; i < initial; ++i) run.submit();

  engine.run(Clock::now() + budget);
  // A callback run by the deadline path may have queued more work; a run
  // with an expired deadline must complete it too.
  for (std::size_t round = 0; engine.pending() > 0; ++round) {
    if (round > kMaxRequests) __builtin_trap();
    engine.run(Clock::now());
  }
  for (const int c : run.calls) {
    if (c != 1) __builtin_trap();  // lost (never completed) request
  }
  const ibfx::MadEngineStats& stats = engine.stats();
  // Every request is counted once: answered, failed, timed out, or
  // cancelled by a run's deadline (not asked: no evidence of a silent node).
  if (stats.ok + stats.errors + stats.timeouts + stats.cancelled != run.calls.size()) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  FuzzedDataProvider in(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    fuzz_decoders(in);
  } else {
    fuzz_engine(in);
  }
  return 0;
}
