#include "history/history_ring.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "history/history_downsample.h"

namespace ibfx {
namespace {

// Most switches of `table` are in `other`: the same fabric, give or take a
// discovery's worth of change.
bool same_fabric(const HistorySwitchTable& a, const HistorySwitchTable& b) {
  if (a.switches.empty() || b.switches.empty()) return true;
  std::unordered_set<std::uint64_t> guids;
  for (const HistorySwitch& s : a.switches) guids.insert(s.guid);
  std::size_t common = 0;
  for (const HistorySwitch& s : b.switches) common += guids.count(s.guid);
  return common * 2 >= std::min(a.switches.size(), b.switches.size());
}

}  // namespace

HistoryRing::HistoryRing(HistorySettings settings) : settings_(settings) {}

std::size_t HistoryRing::drop_after(double time) {
  std::size_t dropped = 0;
  while (!recent_.empty() && recent_.back()->time >= time) {
    // The same time is the same sweep published again (the publisher
    // republishes the last snapshot while the MAD worker is down): replaced,
    // not a clock going back.
    if (recent_.back()->time > time) ++dropped;
    bytes_ -= recent_.back()->bytes();
    recent_.pop_back();
  }
  // A coarse step holding sweeps after `time` goes too: its worst may be
  // one of them.
  while (recent_.empty() && !coarse_.empty() &&
         coarse_.back()->time + coarse_.back()->span > time) {
    bytes_ -= coarse_.back()->bytes();
    coarse_.pop_back();
    ++dropped;
  }
  return dropped;
}

void HistoryRing::fold_oldest_recent() {
  const HistoryFramePtr oldest = std::move(recent_.front());
  recent_.pop_front();
  bytes_ -= oldest->bytes();
  const double step = settings_.coarse_step_seconds;
  const double start = history_step_start(oldest->time, step);
  if (!coarse_.empty() && coarse_.back()->time == start) {
    HistoryFramePtr merged = fold_into_step(coarse_.back().get(), *oldest, step);
    bytes_ -= coarse_.back()->bytes();
    bytes_ += merged->bytes();
    coarse_.back() = std::move(merged);
  } else {
    HistoryFramePtr folded = fold_into_step(nullptr, *oldest, step);
    bytes_ += folded->bytes();
    coarse_.push_back(std::move(folded));
  }
}

void HistoryRing::pop_oldest_coarse() {
  bytes_ -= coarse_.front()->bytes();
  coarse_.pop_front();
}

void HistoryRing::enforce_bounds(double now) {
  while (!recent_.empty() && recent_.front()->time < now - settings_.recent_window_seconds) {
    fold_oldest_recent();
  }
  while (!coarse_.empty() &&
         coarse_.front()->time + coarse_.front()->span <= now - settings_.coarse_window_seconds) {
    pop_oldest_coarse();
  }
  // The budget: switch tables are shared, so they are counted once each.
  std::unordered_set<const HistorySwitchTable*> tables;
  table_bytes_ = 0;
  for (const auto* list : {&coarse_, &recent_}) {
    for (const HistoryFramePtr& f : *list) {
      if (!tables.insert(f->table.get()).second) continue;
      for (const HistorySwitch& s : f->table->switches) {
        table_bytes_ += sizeof(HistorySwitch) + s.name.capacity();
      }
    }
  }
  while (bytes_ + table_bytes_ > settings_.max_bytes && size() > 1) {
    if (!coarse_.empty()) {
      pop_oldest_coarse();
    } else {
      fold_oldest_recent();
    }
  }
}

HistoryRecordOutcome HistoryRing::record(HistoryFramePtr frame) {
  HistoryRecordOutcome outcome;
  if (check_restored_) {
    check_restored_ = false;
    const auto newest = table();
    if (newest && !same_fabric(*newest, *frame->table)) {
      outcome.dropped_foreign = size();
      coarse_.clear();
      recent_.clear();
      bytes_ = 0;
    }
  }
  outcome.dropped_future = drop_after(frame->time);
  const double now = frame->time;
  bytes_ += frame->bytes();
  recent_.push_back(std::move(frame));
  enforce_bounds(now);
  return outcome;
}

void HistoryRing::restore(std::vector<HistoryFramePtr> frames) {
  coarse_.clear();
  recent_.clear();
  bytes_ = 0;
  std::stable_sort(
      frames.begin(), frames.end(),
      [](const HistoryFramePtr& a, const HistoryFramePtr& b) { return a->time < b->time; });
  for (HistoryFramePtr& f : frames) {
    if (!f || !f->table) continue;
    bytes_ += f->bytes();
    (f->span > 0 ? coarse_ : recent_).push_back(std::move(f));
  }
  // Sweep frames older than the last coarse step cannot be (they would
  // have been folded): a file that says otherwise loses them.
  while (!coarse_.empty() && !recent_.empty() &&
         recent_.front()->time < coarse_.back()->time + coarse_.back()->span) {
    bytes_ -= recent_.front()->bytes();
    recent_.pop_front();
  }
  check_restored_ = size() > 0;
  if (size() > 0) {
    enforce_bounds(recent_.empty() ? coarse_.back()->time : recent_.back()->time);
  }
}

std::shared_ptr<const HistoryFrames> HistoryRing::frames() const {
  auto out = std::make_shared<HistoryFrames>();
  out->frames.reserve(size());
  out->frames.insert(out->frames.end(), coarse_.begin(), coarse_.end());
  out->frames.insert(out->frames.end(), recent_.begin(), recent_.end());
  return out;
}

std::shared_ptr<const HistorySwitchTable> HistoryRing::table() const {
  if (!recent_.empty()) return recent_.back()->table;
  if (!coarse_.empty()) return coarse_.back()->table;
  return nullptr;
}

}  // namespace ibfx
