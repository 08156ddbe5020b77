// Pipelined MAD engine: many requests in flight, matched to responses by
// transaction id, with a global in-flight limit, a per-node limit (a switch's
// management CPU answers MADs one by one and must not be flooded), a per-MAD
// timeout, bounded retries and an optional MADs-per-second cap.
// Single-threaded: submit() and run() are called from the sweep thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "mad/mad_transport.h"

namespace ibfx {

struct MadEngineLimits {
  int global_inflight = 128;
  int per_node_inflight = 4;
  std::chrono::milliseconds timeout{100};
  int retries = 2;
  int max_mads_per_second = 0;  // 0: unlimited
};

// kCancelled: the deadline of run() came first (never sent, or sent and not
// yet timed out): the node was not really asked, which is no evidence of
// anything wrong with it.
enum class MadResult : std::uint8_t { kOk, kTimeout, kError, kCancelled };

struct MadCompletion {
  MadResult result = MadResult::kOk;
  std::uint16_t mad_status = 0;  // MAD header Status for kError answers
  PmaData data{};                // PMA data area of the response (kOk)
};

struct MadEngineStats {
  std::uint64_t sent = 0;      // every attempt, retries included
  std::uint64_t ok = 0;        // requests answered with status 0
  std::uint64_t timeouts = 0;  // requests that exhausted their retries
  std::uint64_t errors = 0;    // requests answered with a non-zero status or not sendable
  std::uint64_t retries = 0;
  std::uint64_t late_or_unknown = 0;  // responses matching no outstanding request
  // Optional probes (attributes a PMA may lack) that got no usable answer;
  // kept apart so they do not read as a sick fabric.
  std::uint64_t optional_unanswered = 0;
  std::uint64_t cancelled = 0;  // cut by run()'s deadline (not timeouts)
};

class MadEngine {
 public:
  using Callback = std::function<void(const MadCompletion&)>;

  MadEngine(MadTransport& transport, MadEngineLimits limits);

  void set_limits(const MadEngineLimits& limits) { limits_ = limits; }
  const MadEngineLimits& limits() const { return limits_; }

  // Queues a PMA request; the callback runs on a later run() (it may submit
  // more requests).
  void submit(std::uint16_t lid, std::uint8_t method, std::uint16_t attr_id, std::uint32_t attr_mod,
              const PmaData& data, Callback callback);
  // As submit(), for a probe the PMA may not support: one attempt, and a
  // failure counts as optional_unanswered rather than a timeout or error.
  void submit_optional(std::uint16_t lid, std::uint8_t method, std::uint16_t attr_id,
                       std::uint32_t attr_mod, const PmaData& data, Callback callback);

  // A LID-routed SMP Get (QP0) through the same pipeline and limits; the
  // completion's data is the SMP data area. Only if smp_supported().
  void submit_smp(std::uint16_t lid, std::uint16_t attr_id, std::uint32_t attr_mod,
                  Callback callback);
  bool smp_supported() const { return transport_.supports_smp(); }

  // Drives the pipeline until every request has completed, or until
  // `deadline` (then the rest, and any follow-up their callbacks submit,
  // complete as kCancelled). Either way nothing is pending when it returns.
  // Returns false when the deadline cut the run short.
  bool run(std::chrono::steady_clock::time_point deadline);

  // Cancels everything queued or in flight without calling callbacks.
  void abandon();

  const MadEngineStats& stats() const { return stats_; }
  std::size_t pending() const { return queued_ + inflight_count_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Request {
    std::uint16_t lid = 0;
    std::uint8_t method = 0;
    std::uint16_t attr_id = 0;
    std::uint32_t attr_mod = 0;
    int attempts = 0;
    bool optional = false;
    bool smp = false;
    PmaData data{};
    Callback callback;
  };
  struct InFlight {
    Request request;
    Clock::time_point deadline;
  };
  struct Node {
    std::deque<Request> queue;
    int inflight = 0;
    bool in_ready = false;
    // Service order: the node first given work in this run() is served
    // first, up to its per-node limit, before nodes queued after it. A run
    // cut short by its deadline then leaves a prefix of the nodes finished
    // and the rest not started, instead of every node half done.
    std::uint64_t rank = 0;
    std::uint64_t rank_run = ~std::uint64_t{0};
  };

  void enqueue(Request request);
  void fill_window(Clock::time_point now);
  bool send_one(Request request, Clock::time_point now);
  void handle(const Received& received);
  void expire(Clock::time_point now);
  // Pops the deadlines of requests no longer in flight off the front.
  void drop_answered_deadlines();
  void finish(Request& request, const MadCompletion& completion);
  void fail(Request& request, MadResult result);
  void release_node(std::uint16_t lid);
  void requeue(Request request);
  void make_ready(std::uint16_t lid, Node& node);
  // Completes every queued and in-flight request, and whatever their
  // callbacks submit meanwhile, as kCancelled: run() returns with nothing
  // pending.
  void cancel_all();
  bool rate_allows(Clock::time_point now);

  MadTransport& transport_;
  MadEngineLimits limits_;
  MadEngineStats stats_;
  std::unordered_map<std::uint16_t, Node> nodes_;
  // Nodes with queued work and spare per-node slots, lowest rank first.
  using Ready = std::pair<std::uint64_t, std::uint16_t>;  // rank, LID
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready_;
  std::uint64_t run_ = 0;  // run() calls completed
  std::uint64_t next_rank_ = 0;
  // In-flight requests in a slot table instead of a hash map (no allocation
  // per MAD): the low 32 bits of a TID are (sequence << 16 | slot), and a
  // response counts only if its TID is the one its slot holds now, so a late
  // answer to an earlier occupant of the slot is recognised as such.
  struct Slot {
    bool active = false;
    std::uint32_t tid = 0;
    InFlight flight;
  };
  Slot* find_slot(std::uint32_t tid);
  std::uint32_t acquire_slot();
  Request release_slot(Slot& slot);
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t inflight_count_ = 0;
  std::deque<std::pair<Clock::time_point, std::uint32_t>> deadlines_;  // send order
  std::size_t queued_ = 0;
  std::uint32_t next_sequence_ = 1;
  double tokens_ = 0;
  Clock::time_point last_refill_{};
};

}  // namespace ibfx
