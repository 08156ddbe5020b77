// One file of the state directory (docs/operations.md, "State directory"),
// whatever it holds: read once at start-up, written again whenever its
// owner hands it something new, by a thread of its own so that a slow disk
// (an fsync can take seconds on a busy one) never delays a sweep or a
// render. Writes are whole-file replacements (base/atomic_file.h): after a
// crash or a power cut the file holds the last complete state, never a torn
// one; they are coalesced to at most one per `min_write_interval`.
//
// A missing state directory is created; a missing file is a first start; an
// unreadable file is logged and ignored, and one its owner refuses
// (corrupt, foreign, another version) is logged and kept aside as
// <file>.bad, so that nothing an operator may want is overwritten. Nothing
// here ever stops the daemon.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace ibfx {

class StateFile {
 public:
  // Produces the file's contents; runs on the writer thread.
  using Encode = std::function<std::string()>;

  // `directory` empty: persistence is off (read() finds nothing, save()
  // drops). `what` names the contents in log lines ("congestion events").
  // Starts the writer thread, named `thread_name`.
  StateFile(std::string directory, const std::string& file_name, std::string what,
            std::chrono::milliseconds min_write_interval, const char* thread_name);
  ~StateFile();
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  const std::string& path() const { return path_; }

  // The file's contents, or nothing (first start, persistence off, an
  // unreadable file or directory: logged). Call once, before the first save().
  std::optional<std::string> read();
  // The contents read() returned are unusable for `reason`: logged, and
  // the file is renamed <file>.bad.
  void set_aside(const std::string& reason);

  // Hands the writer what to write (the latest replaces one not yet
  // written). Never blocks on the disk.
  void save(Encode encode);

  // Writes what is pending now and stops the thread (shutdown). Idempotent.
  void stop();

  // Completed writes and failed ones (tests, the daemon's own metrics).
  std::uint64_t writes() const;
  std::uint64_t failures() const;

 private:
  void run();

  std::string directory_;
  std::string path_;
  std::string what_;
  std::chrono::milliseconds min_write_interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Encode> pending_;
  bool stopping_ = false;
  std::uint64_t writes_ = 0;
  std::uint64_t failures_ = 0;
  std::string last_error_;  // logged once per distinct error
  std::thread thread_;
};

}  // namespace ibfx
