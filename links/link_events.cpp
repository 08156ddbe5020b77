#include "links/link_events.h"

#include <algorithm>

namespace ibfx {

void LinkEventTracker::observe(const LinkHealthReport& report,
                               const std::vector<std::string>& node_names, double now) {
  auto name_of = [&](const LinkEnd& e) {
    return e.node != kNoNode && static_cast<std::size_t>(e.node) < node_names.size()
               ? node_names[static_cast<std::size_t>(e.node)]
               : std::string();
  };
  std::map<Key, bool> seen;
  bool changed = false;
  for (const LinkReport& l : report.links) {
    const double ber = std::max(l.into_a.symbol_ber, l.into_b.symbol_ber);
    for (std::size_t c = 1; c < kLinkConditionCount; ++c) {
      const auto condition = static_cast<LinkCondition>(c);
      // A condition that does not alarm (length_outlier) opens no event.
      if (!l.has(condition) || !link_condition_alarms(condition)) continue;
      // The cable's identity: its a end (smaller GUID, port), then b.
      const Key key{l.a.guid, l.a.port, l.b.guid, l.b.port, condition};
      seen[key] = true;
      auto it = active_.find(key);
      if (it == active_.end()) {
        const bool b_first = l.b_receives_worse();
        const LinkEnd& node = b_first ? l.b : l.a;
        const LinkEnd& remote = b_first ? l.a : l.b;
        LinkEvent e;
        e.id = next_id_++;
        e.node = {node.guid, name_of(node)};
        e.node_port = node.port;
        e.remote = {remote.guid, name_of(remote)};
        e.remote_port = remote.port;
        e.condition = condition;
        e.start = now;
        it = active_.emplace(key, std::move(e)).first;
      }
      LinkEvent& e = it->second;
      e.last_seen = now;
      e.peak_ber = std::max(e.peak_ber, ber);
      e.downs = std::max(e.downs, l.downs_last_hour);
      changed = true;
    }
  }
  // A condition the link no longer has ends its event; one restored from
  // a previous run and not seen since gets the grace its condition needs
  // to show again.
  for (auto it = active_.begin(); it != active_.end();) {
    const bool in_grace = restored_at_ > 0 && it->second.last_seen <= restored_at_ &&
                          now - restored_at_ < kRestoredGraceSeconds;
    if (seen.contains(it->first) || in_grace) {
      ++it;
      continue;
    }
    LinkEvent e = std::move(it->second);
    e.end = e.last_seen;
    ended_.push_back(std::move(e));
    it = active_.erase(it);
    changed = true;
  }
  // The same bounds as the congestion events' history.
  while (!ended_.empty() &&
         (ended_.size() > kMaxEnded || now - *ended_.front().end > kMaxAgeSeconds)) {
    ended_.erase(ended_.begin());
    changed = true;
  }
  if (changed) publish();
}

LinkEventTrackerState LinkEventTracker::state() const {
  return LinkEventTrackerState{next_id_, *list_};
}

void LinkEventTracker::restore(LinkEventTrackerState state, double now) {
  active_.clear();
  ended_.clear();
  next_id_ = state.next_id;
  for (LinkEvent& e : state.events) {
    next_id_ = std::max(next_id_, e.id + 1);
    if (!e.active()) {
      ended_.push_back(std::move(e));
      continue;
    }
    // The same key observe() gives the cable: its end with the smaller
    // (GUID, port) first.
    const bool node_first =
        std::tie(e.node.guid, e.node_port) < std::tie(e.remote.guid, e.remote_port);
    const Key key = node_first
                        ? Key{e.node.guid, e.node_port, e.remote.guid, e.remote_port, e.condition}
                        : Key{e.remote.guid, e.remote_port, e.node.guid, e.node_port, e.condition};
    active_.emplace(key, std::move(e));
  }
  std::sort(ended_.begin(), ended_.end(),
            [](const LinkEvent& x, const LinkEvent& y) { return *x.end < *y.end; });
  restored_at_ = now;
  publish();
}

void LinkEventTracker::publish() {
  auto list = std::make_shared<LinkEventList>();
  list->reserve(active_.size() + ended_.size());
  for (const auto& [key, e] : active_) list->push_back(e);
  list->insert(list->end(), ended_.begin(), ended_.end());
  std::stable_sort(list->begin(), list->end(), [](const LinkEvent& x, const LinkEvent& y) {
    return x.start != y.start ? x.start > y.start : x.id > y.id;
  });
  list_ = std::move(list);
  ++version_;
}

}  // namespace ibfx
