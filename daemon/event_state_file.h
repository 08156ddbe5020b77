// The congestion events on disk (docs/operations.md, "State directory"):
// read once at start-up, written again whenever they changed, by a thread of
// its own so that a slow disk (an fsync can take seconds on a busy one)
// never delays a sweep. Writes are whole-file replacements
// (base/atomic_file.h): after a crash or a power cut the file holds the
// last complete state, never a torn one.
//
// A missing state directory is created; a missing file is a first start; an
// unreadable, corrupt or foreign file is logged with its reason and the
// daemon starts with no events (and keeps the bad file aside as
// events.json.bad, so that nothing an operator may want is overwritten).
// Nothing here ever stops the daemon.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "analysis/congestion_events.h"

namespace ibfx {

class EventStateFile {
 public:
  // At most one write per this long while events keep changing (an active
  // event's last_seen moves every sweep): the file lags by at most this.
  static constexpr std::chrono::milliseconds kMinWriteInterval{2000};

  // `directory` empty: persistence is off (load() finds nothing, save()
  // drops). Starts the writer thread (ibfx-state).
  explicit EventStateFile(std::string directory);
  ~EventStateFile();
  EventStateFile(const EventStateFile&) = delete;
  EventStateFile& operator=(const EventStateFile&) = delete;

  const std::string& path() const { return path_; }

  // The saved state, or nothing (first start, persistence off, or a bad
  // file: logged). Call once, before the first save().
  std::optional<EventTrackerState> load();

  // Hands the writer the state to write (the latest replaces one not yet
  // written). Never blocks on the disk.
  void save(EventTrackerState state, double saved_at);

  // Writes what is pending now and stops the thread (shutdown). Idempotent.
  void stop();

  // Completed writes and failed ones (tests, the daemon's own metrics).
  std::uint64_t writes() const;
  std::uint64_t failures() const;

 private:
  void run();

  std::string directory_;
  std::string path_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // The state not yet written and its time; encoded on the writer thread.
  std::optional<std::pair<EventTrackerState, double>> pending_;
  bool stopping_ = false;
  std::uint64_t writes_ = 0;
  std::uint64_t failures_ = 0;
  std::string last_error_;  // logged once per distinct error
  std::thread thread_;
};

}  // namespace ibfx
