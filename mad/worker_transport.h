// The MadTransport the exporter's sweeps use in the daemon: MAD frames
// (mad/mad_frame.h) over the current MAD worker's channel. It
// follows the worker across restarts (MadWorker::generation()), buffers
// requests and writes them in batches, and reads answers without blocking.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mad/mad_frame.h"
#include "mad/mad_transport.h"
#include "mad/mad_worker.h"

namespace ibfx {

// Sends through whichever worker is current. Frames are buffered and
// written in batches (on receive() or when the buffer is large), so that a
// MAD costs a memcpy, not a system call. Used by one thread (the sweep's).
class WorkerTransport final : public MadTransport {
 public:
  explicit WorkerTransport(MadWorker& worker) : worker_(worker) {}

  bool send(std::uint16_t lid, const MadBytes& mad, std::chrono::milliseconds timeout) override;
  // Asked once per sweep and node: the flag the current worker's ready
  // message carried, not a round trip.
  bool supports_smp() const override { return worker_.supports_smp(); }
  Received receive(std::chrono::milliseconds wait) override;

 private:
  static constexpr std::size_t kFlushBytes = 64 * kFrameSize;
  static constexpr std::size_t kReadChunk = 128 * kFrameSize;

  // Picks up a new worker (and drops what was buffered for the old one).
  void refresh();
  void fail(const std::string& why);
  // Reads whatever is there without blocking; false when the worker is gone.
  bool fill();
  bool pop(Received& r);
  // Writes the buffered frames. While the socket is full, responses are
  // read meanwhile: the worker may be blocked writing to us.
  bool flush();

  MadWorker& worker_;
  std::uint64_t generation_ = 0;
  std::shared_ptr<MadWorker::Connection> conn_;
  std::vector<std::uint8_t> out_;
  std::size_t in_capacity_ = 2 * kReadChunk;
  std::unique_ptr<std::uint8_t[]> in_ =
      std::make_unique_for_overwrite<std::uint8_t[]>(in_capacity_);
  std::size_t in_pos_ = 0;  // next frame to parse
  std::size_t in_end_ = 0;  // end of the bytes read
};

}  // namespace ibfx
