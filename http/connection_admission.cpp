#include "http/connection_admission.h"

#include <malloc.h>

#include <utility>

namespace ibfx {

ConnectionAdmission::ConnectionAdmission(std::size_t max_connections, std::size_t max_per_client)
    : max_connections_(max_connections), max_per_client_(max_per_client) {}

ConnectionAdmission::Admission ConnectionAdmission::admit(
    std::uint64_t id, const std::shared_ptr<HttpSession>& session, const std::string& client,
    std::vector<std::shared_ptr<HttpSession>>& victims) {
  std::lock_guard lock(mutex_);
  if (stopped_.load()) return Admission::kStopped;
  if (max_per_client_ > 0) {
    auto own = clients_.find(client);
    if (own != clients_.end() && own->second.count >= max_per_client_ &&
        !evict_oldest_locked(own->second.evictable, victims)) {
      refused_.fetch_add(1);
      return Admission::kRefused;
    }
  }
  while (sessions_.size() >= max_connections_) {
    if (!evict_oldest_locked(evictable_, victims)) {
      refused_.fetch_add(1);
      return Admission::kRefused;
    }
  }
  auto& connections = clients_[client];
  ++connections.count;
  Tracked tracked;
  tracked.session = session;
  tracked.client = client;
  tracked.evictable = true;
  tracked.in_all = evictable_.insert(evictable_.end(), id);
  tracked.in_client = connections.evictable.insert(connections.evictable.end(), id);
  sessions_.emplace(id, std::move(tracked));
  return Admission::kAdmitted;
}

void ConnectionAdmission::untrack_locked(std::unordered_map<std::uint64_t, Tracked>::iterator it) {
  Tracked& tracked = it->second;
  const auto client = clients_.find(tracked.client);
  if (tracked.evictable) {
    evictable_.erase(tracked.in_all);
    client->second.evictable.erase(tracked.in_client);
  }
  if (--client->second.count == 0) clients_.erase(client);
  sessions_.erase(it);
}

bool ConnectionAdmission::evict_oldest_locked(Order& order,
                                              std::vector<std::shared_ptr<HttpSession>>& victims) {
  if (order.empty()) return false;
  const auto it = sessions_.find(order.front());
  // A session whose last reference is going away has no one to close;
  // its slot is free all the same.
  if (auto victim = it->second.session.lock()) victims.push_back(std::move(victim));
  untrack_locked(it);  // may destroy `order` (the client's last connection)
  evicted_.fetch_add(1);
  return true;
}

bool ConnectionAdmission::evict_oldest(std::vector<std::shared_ptr<HttpSession>>& victims) {
  std::lock_guard lock(mutex_);
  return evict_oldest_locked(evictable_, victims);
}

void ConnectionAdmission::release(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  const auto it = sessions_.find(id);
  if (it != sessions_.end()) untrack_locked(it);  // an evicted one is gone already
}

void ConnectionAdmission::set_evictable(std::uint64_t id, bool evictable) {
  std::lock_guard lock(mutex_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.evictable == evictable) return;
  Tracked& tracked = it->second;
  auto& own = clients_.find(tracked.client)->second;
  if (evictable) {
    tracked.in_all = evictable_.insert(evictable_.end(), id);
    tracked.in_client = own.evictable.insert(own.evictable.end(), id);
  } else {
    evictable_.erase(tracked.in_all);
    own.evictable.erase(tracked.in_client);
  }
  tracked.evictable = evictable;
}

std::vector<std::shared_ptr<HttpSession>> ConnectionAdmission::stop() {
  std::lock_guard lock(mutex_);
  stopped_.store(true);
  std::vector<std::shared_ptr<HttpSession>> live;
  for (auto& [id, tracked] : sessions_) {
    if (auto session = tracked.session.lock()) live.push_back(std::move(session));
  }
  return live;
}

std::size_t ConnectionAdmission::registered() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void ConnectionAdmission::connection_opened() {
  const std::size_t open = open_connections_.fetch_add(1) + 1;
  std::size_t peak = peak_connections_.load();
  while (open > peak && !peak_connections_.compare_exchange_weak(peak, open)) {
  }
}

// A flood leaves the heap full of freed session and TLS buffers (about
// 100 KiB per TLS connection) that glibc keeps; once it has subsided, give
// them back to the system so the daemon's RSS returns to normal.
void ConnectionAdmission::connection_closed() {
  const std::size_t open = open_connections_.fetch_sub(1) - 1;
  std::size_t peak = peak_connections_.load();
  if (peak >= kTrimAfterConnections && open <= peak / 8 &&
      peak_connections_.compare_exchange_strong(peak, open)) {
    ::malloc_trim(0);
  }
}

}  // namespace ibfx
