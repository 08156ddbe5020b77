#include "mad/mad_engine.h"

#include <algorithm>

namespace ibfx {

MadEngine::MadEngine(MadTransport& transport, MadEngineLimits limits)
    : transport_(transport), limits_(limits) {}

void MadEngine::submit(std::uint16_t lid, std::uint8_t method, std::uint16_t attr_id,
                       std::uint32_t attr_mod, const PmaData& data, Callback callback) {
  enqueue(Request{lid, method, attr_id, attr_mod, 0, false, false, data, std::move(callback)});
}

void MadEngine::submit_optional(std::uint16_t lid, std::uint8_t method, std::uint16_t attr_id,
                                std::uint32_t attr_mod, const PmaData& data, Callback callback) {
  enqueue(Request{lid, method, attr_id, attr_mod, 0, true, false, data, std::move(callback)});
}

void MadEngine::submit_smp(std::uint16_t lid, std::uint16_t attr_id, std::uint32_t attr_mod,
                           Callback callback) {
  constexpr std::uint8_t kMethodGet = 0x01;
  enqueue(
      Request{lid, kMethodGet, attr_id, attr_mod, 0, false, true, PmaData{}, std::move(callback)});
}

void MadEngine::enqueue(Request request) {
  const std::uint16_t lid = request.lid;
  Node& node = nodes_[lid];
  if (node.rank_run != run_) {
    node.rank_run = run_;
    node.rank = next_rank_++;
  }
  node.queue.push_back(std::move(request));
  ++queued_;
  make_ready(lid, node);
}

void MadEngine::fail(Request& request, MadResult result) {
  if (result == MadResult::kCancelled) {
    ++stats_.cancelled;
  } else if (request.optional) {
    ++stats_.optional_unanswered;
  } else if (result == MadResult::kTimeout) {
    ++stats_.timeouts;
  } else {
    ++stats_.errors;
  }
  // The same completion for every request failed alike (no data): a sweep
  // cut short cancels ~100k requests, and a fresh MadCompletion (its
  // 192-byte data area zeroed) for each was a tenth of that.
  static const MadCompletion kFailed[] = {{MadResult::kOk, 0, {}},
                                          {MadResult::kTimeout, 0, {}},
                                          {MadResult::kError, 0, {}},
                                          {MadResult::kCancelled, 0, {}}};
  finish(request, kFailed[static_cast<std::size_t>(result)]);
}

void MadEngine::make_ready(std::uint16_t lid, Node& node) {
  if (!node.in_ready && !node.queue.empty() && node.inflight < limits_.per_node_inflight) {
    node.in_ready = true;
    ready_.emplace(node.rank, lid);
  }
}

bool MadEngine::rate_allows(Clock::time_point now) {
  if (limits_.max_mads_per_second <= 0) return true;
  const double rate = limits_.max_mads_per_second;
  const double elapsed = std::chrono::duration<double>(now - last_refill_).count();
  last_refill_ = now;
  // Allow a burst of at most one in-flight window.
  tokens_ = std::min(tokens_ + elapsed * rate, std::max(1.0, double(limits_.global_inflight)));
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

void MadEngine::fill_window(Clock::time_point now) {
  // The earliest-queued node first, up to its per-node limit; the global
  // window is shared by many nodes at once, so one big switch (held to
  // per_node_inflight) cannot starve the others.
  while (!ready_.empty() && static_cast<int>(inflight_count_) < limits_.global_inflight) {
    if (!rate_allows(now)) return;
    const std::uint16_t lid = ready_.top().second;
    ready_.pop();
    Node& node = nodes_[lid];
    node.in_ready = false;
    if (node.queue.empty() || node.inflight >= limits_.per_node_inflight) continue;
    Request request = std::move(node.queue.front());
    node.queue.pop_front();
    --queued_;
    send_one(std::move(request), now);
    make_ready(lid, nodes_[lid]);
  }
}

MadEngine::Slot* MadEngine::find_slot(std::uint32_t tid) {
  const std::uint32_t index = tid & 0xFFFFu;
  if (index >= slots_.size()) return nullptr;
  Slot& slot = slots_[index];
  return slot.active && slot.tid == tid ? &slot : nullptr;
}

std::uint32_t MadEngine::acquire_slot() {
  if (free_slots_.empty()) {
    slots_.emplace_back();
    return static_cast<std::uint32_t>(slots_.size() - 1);
  }
  const std::uint32_t index = free_slots_.back();
  free_slots_.pop_back();
  return index;
}

MadEngine::Request MadEngine::release_slot(Slot& slot) {
  slot.active = false;
  --inflight_count_;
  free_slots_.push_back(static_cast<std::uint32_t>(&slot - slots_.data()));
  return std::move(slot.flight.request);
}

bool MadEngine::send_one(Request request, Clock::time_point now) {
  // The slot table has at most 65536 entries (16 bits of the TID); the
  // global in-flight limit (config: at most 4096) keeps it far below.
  const std::uint32_t index = acquire_slot();
  const std::uint32_t tid = (next_sequence_++ << 16) | index;
  if ((next_sequence_ & 0xFFFFu) == 0) next_sequence_ = 1;
  MadBytes mad;
  if (request.smp) {
    build_smp_mad(mad, request.method, request.attr_id, request.attr_mod, tid);
  } else {
    build_pma_mad(mad, request.method, request.attr_id, request.attr_mod, tid, request.data);
  }
  ++request.attempts;
  ++stats_.sent;
  if (!transport_.send(request.lid, mad, limits_.timeout)) {
    free_slots_.push_back(index);
    fail(request, MadResult::kError);
    return false;
  }
  Node& node = nodes_[request.lid];
  ++node.inflight;
  const auto deadline = now + limits_.timeout;
  Slot& slot = slots_[index];
  slot.active = true;
  slot.tid = tid;
  slot.flight = InFlight{std::move(request), deadline};
  ++inflight_count_;
  deadlines_.emplace_back(deadline, tid);
  return true;
}

void MadEngine::finish(Request& request, const MadCompletion& completion) {
  // Move the callback out first: it may submit(), which can rehash nodes_.
  Callback cb = std::move(request.callback);
  if (cb) cb(completion);
}

void MadEngine::release_node(std::uint16_t lid) {
  Node& node = nodes_[lid];
  if (node.inflight > 0) --node.inflight;
  make_ready(lid, node);
}

void MadEngine::requeue(Request request) {
  // A retry goes to the front of its node's queue: it is the oldest work.
  ++stats_.retries;
  const std::uint16_t lid = request.lid;
  Node& node = nodes_[lid];
  node.queue.push_front(std::move(request));
  ++queued_;
  make_ready(lid, node);
}

void MadEngine::handle(const Received& received) {
  const auto tid = static_cast<std::uint32_t>(mad_tid(received.mad));
  Slot* slot = find_slot(tid);
  if (slot == nullptr) {
    ++stats_.late_or_unknown;
    return;
  }
  Request request = release_slot(*slot);
  release_node(request.lid);
  if (received.kind == Received::Kind::kSendFailed) {
    // The kernel timed the request out: same path as our own timeout.
    if (!request.optional && request.attempts <= limits_.retries) {
      requeue(std::move(request));
      return;
    }
    fail(request, MadResult::kTimeout);
    return;
  }
  MadCompletion c;
  c.mad_status = mad_status(received.mad);
  if (c.mad_status != 0 && request.optional) {
    fail(request, MadResult::kError);
    return;
  }
  if (c.mad_status == 0) {
    c.result = MadResult::kOk;
    c.data = pma_data(received.mad);
    ++stats_.ok;
  } else {
    c.result = MadResult::kError;
    ++stats_.errors;
  }
  finish(request, c);
}

void MadEngine::drop_answered_deadlines() {
  while (!deadlines_.empty() && find_slot(deadlines_.front().second) == nullptr) {
    deadlines_.pop_front();
  }
}

void MadEngine::expire(Clock::time_point now) {
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    const std::uint32_t tid = deadlines_.front().second;
    deadlines_.pop_front();
    Slot* slot = find_slot(tid);
    if (slot == nullptr) continue;  // already answered
    Request request = release_slot(*slot);
    release_node(request.lid);
    if (!request.optional && request.attempts <= limits_.retries) {
      requeue(std::move(request));
      continue;
    }
    fail(request, MadResult::kTimeout);
  }
}

bool MadEngine::run(Clock::time_point deadline) {
  using std::chrono::milliseconds;
  while (pending() > 0) {
    auto now = Clock::now();
    if (now >= deadline) {
      cancel_all();
      ++run_;
      return false;
    }
    fill_window(now);
    if (inflight_count_ == 0) {
      if (queued_ == 0) continue;
      // Only the rate limit can hold queued work back with nothing in flight.
      Received nothing = transport_.receive(milliseconds(1));
      if (nothing.kind != Received::Kind::kNothing) handle(nothing);
      continue;
    }
    // Wait no longer than the oldest outstanding request's deadline. The
    // queue also holds the deadlines of requests answered since (they leave
    // it lazily), and the oldest of those passes every few microseconds in a
    // busy sweep: waiting on them turned every wait into a non-blocking poll
    // (bench/run 512: 1.8M recv calls in 2 s). Rounded up, so the last
    // fraction of a millisecond is waited for, not spun through.
    drop_answered_deadlines();
    auto wait = std::chrono::ceil<milliseconds>(deadlines_.front().first - now);
    wait = std::clamp(wait, milliseconds(0), milliseconds(50));
    Received r = transport_.receive(wait);
    if (r.kind != Received::Kind::kNothing) {
      handle(r);
      // Drain whatever else is already there without waiting, refilling the
      // window after every answer: draining a whole batch first would leave
      // the fabric idle while we process it, then us idle while it answers
      // (bench/run 512 on ibsim: a sweep took 2.4x the raw pump, 1.8x now).
      for (int i = 0; i < 256; ++i) {
        fill_window(now);
        Received more = transport_.receive(milliseconds(0));
        if (more.kind == Received::Kind::kNothing) break;
        handle(more);
      }
    }
    expire(Clock::now());
  }
  ++run_;  // the next run ranks its nodes afresh
  return true;
}

void MadEngine::cancel_all() {
  // Out of time: everything left completes as cancelled, so callers still
  // account for every request, and can tell "not asked" from "asked and
  // silent". A cancellation callback may submit a follow-up (the sweeper's
  // LID check for readings already held): it is cancelled too, in the same
  // run. Left queued, it would be sent first in the next run() and complete
  // there, into callbacks whose sweep state (check and work indices, the
  // result) belongs to the sweep that ended: it marked a node of the next
  // sweep as moved, so not answering, with no MAD timed out (issue #19).
  while (pending() > 0) {
    std::vector<Request> left;
    left.reserve(pending());  // no regrowth: each Request is ~230 bytes
    for (Slot& slot : slots_) {
      if (slot.active) left.push_back(release_slot(slot));
    }
    deadlines_.clear();
    for (auto& [lid, node] : nodes_) {
      node.inflight = 0;
      node.in_ready = false;
      if (node.queue.empty()) continue;
      for (auto& r : node.queue) left.push_back(std::move(r));
      node.queue.clear();
    }
    ready_ = {};
    queued_ = 0;
    for (auto& r : left) fail(r, MadResult::kCancelled);
  }
}

void MadEngine::abandon() {
  for (Slot& slot : slots_) {
    if (slot.active) release_slot(slot);
  }
  deadlines_.clear();
  nodes_.clear();
  ready_ = {};
  queued_ = 0;
}

}  // namespace ibfx
