// Which connections the HTTP server holds: the connection cap, the
// per-client limit, and which connection is closed to make room for a
// newcomer. A full server evicts the connection that has been idle (or
// handshaking, or sending its headers, or lingering) the longest, overall
// or of the newcomer's own client, rather than turning a scrape away; only
// when every connection is busy answering a request is the newcomer refused.
// Also counts the sessions alive, and hands freed memory back to the system
// once a flood has passed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ibfx {

class HttpSession;

// Thread-safe: sessions run on their own strands, the acceptor on another.
class ConnectionAdmission {
 public:
  // max_per_client 0: no per-client limit.
  ConnectionAdmission(std::size_t max_connections, std::size_t max_per_client);
  ConnectionAdmission(const ConnectionAdmission&) = delete;
  ConnectionAdmission& operator=(const ConnectionAdmission&) = delete;

  enum class Admission { kAdmitted, kRefused, kStopped };
  // Registration is what lets stop() find live sessions and what the limits
  // count; it fails once stop() was called, so a connection accepted
  // concurrently is not leaked. To admit a newcomer at a limit it
  // unregisters the oldest evictable connections into `victims` (the caller
  // evicts them, outside the lock). A new connection is evictable from the
  // start: it is handshaking or waiting for its request line. `client` is
  // the peer's address (the per-client key).
  Admission admit(std::uint64_t id, const std::shared_ptr<HttpSession>& session,
                  const std::string& client, std::vector<std::shared_ptr<HttpSession>>& victims);
  // The session is gone (its destructor); an evicted one is gone already.
  void release(std::uint64_t id);
  // Evictable: idle, handshaking, sending its headers or lingering; not
  // while a request is being answered.
  void set_evictable(std::uint64_t id, bool evictable);
  // Unregisters the connection evictable the longest into `victims`, to give
  // a descriptor back when accept() runs out; false when every one is busy.
  bool evict_oldest(std::vector<std::shared_ptr<HttpSession>>& victims);
  // Admits nothing from now on; returns the sessions still alive, to close.
  std::vector<std::shared_ptr<HttpSession>> stop();
  bool stopped() const { return stopped_.load(); }

  std::size_t max_connections() const { return max_connections_; }
  std::size_t max_per_client() const { return max_per_client_; }
  std::size_t registered() const;
  // Connections unregistered to make room, and newcomers refused, since
  // construction.
  std::uint64_t evicted() const { return evicted_.load(); }
  std::uint64_t refused() const { return refused_.load(); }

  // Sessions alive (constructed, not yet destroyed: an evicted one counts
  // until its socket is closed). After a flood of kTrimAfterConnections or
  // more, the last close that brings the count to an eighth of the peak
  // calls malloc_trim(0).
  void connection_opened();
  void connection_closed();
  std::size_t open_connections() const { return open_connections_.load(); }
  static constexpr std::size_t kTrimAfterConnections = 256;

 private:
  // The eviction order is the order in which connections last became
  // evictable (oldest first), kept both overall and per client address so
  // that each limit finds its victim in O(1).
  using Order = std::list<std::uint64_t>;
  struct Tracked {
    std::weak_ptr<HttpSession> session;
    std::string client;
    bool evictable = false;
    Order::iterator in_all;
    Order::iterator in_client;
  };
  struct ClientConnections {
    std::size_t count = 0;
    Order evictable;
  };
  void untrack_locked(std::unordered_map<std::uint64_t, Tracked>::iterator it);
  bool evict_oldest_locked(Order& order, std::vector<std::shared_ptr<HttpSession>>& victims);

  const std::size_t max_connections_;
  const std::size_t max_per_client_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> evicted_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::size_t> open_connections_{0};
  std::atomic<std::size_t> peak_connections_{0};  // since the last trim

  mutable std::mutex mutex_;  // guards everything below
  std::unordered_map<std::uint64_t, Tracked> sessions_;
  Order evictable_;
  std::unordered_map<std::string, ClientConnections> clients_;
};

}  // namespace ibfx
