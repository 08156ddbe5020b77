// The congestion events on disk (docs/operations.md, "State directory"):
// read once at start-up, written again whenever they changed, through a
// StateFile (pipeline/state_file.h: its own writer thread, whole-file
// replacements, a bad file kept aside as events.json.bad). Nothing here
// ever stops the daemon.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "analysis/congestion_events.h"
#include "pipeline/state_file.h"

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

  const std::string& path() const { return file_.path(); }

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
  StateFile file_;
};

}  // namespace ibfx
