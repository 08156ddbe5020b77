#include "mad/worker_transport.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "mad/worker_connection.h"

namespace ibfx {

using std::chrono::milliseconds;

bool WorkerTransport::send(std::uint16_t lid, const MadBytes& mad, milliseconds timeout) {
  refresh();
  if (!conn_ || conn_->dead.load(std::memory_order_relaxed)) return false;
  const std::size_t at = out_.size();
  out_.resize(at + kFrameSize);
  encode_request_frame(
      MadRequestFrame{lid, static_cast<std::uint32_t>(std::max<std::int64_t>(timeout.count(), 0)),
                      mad},
      out_.data() + at);
  if (out_.size() >= kFlushBytes) return flush();
  return true;
}

Received WorkerTransport::receive(milliseconds wait) {
  refresh();
  Received r;
  if (!conn_ || conn_->dead.load(std::memory_order_relaxed)) {
    // Nothing can arrive; waiting keeps the engine from spinning until its
    // requests expire.
    std::this_thread::sleep_for(std::min(wait, milliseconds(50)));
    return r;
  }
  // Answers already read come first, and requests queued meanwhile wait
  // for the next flush: the engine refills its window after every answer,
  // and this turns a batch of answers into one write of requests.
  if (pop(r)) return r;
  if (!out_.empty() && !flush()) return r;
  if (pop(r)) return r;  // flush() reads while the socket is full
  if (wait.count() > 0) {
    pollfd p{conn_->mad_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return r;
  }
  if (fill()) pop(r);
  return r;
}

void WorkerTransport::refresh() {
  const std::uint64_t gen = worker_.generation();
  if (gen == generation_) return;
  generation_ = gen;
  conn_ = worker_.current();
  out_.clear();
  in_pos_ = 0;
  in_end_ = 0;
}

void WorkerTransport::fail(const std::string& why) {
  out_.clear();
  worker_.broken(conn_, why);
}

bool WorkerTransport::fill() {
  // Keep only the unparsed tail (at most a partial frame, or answers
  // flush() read early), so the buffer does not grow over a sweep.
  if (in_pos_ > 0) {
    std::memmove(in_.get(), in_.get() + in_pos_, in_end_ - in_pos_);
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  for (;;) {
    // Grows only if flush() had to read while the worker's socket was
    // full; never zero-filled (this runs once per batch of answers).
    if (in_capacity_ - in_end_ < kReadChunk) {
      in_capacity_ = std::max(2 * in_capacity_, in_end_ + kReadChunk);
      auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(in_capacity_);
      std::memcpy(bigger.get(), in_.get(), in_end_);
      in_ = std::move(bigger);
    }
    const ssize_t n = ::recv(conn_->mad_fd, in_.get() + in_end_, kReadChunk, MSG_DONTWAIT);
    if (n > 0) {
      in_end_ += static_cast<std::size_t>(n);
      // A short read took everything there was: asking again would only
      // return EAGAIN, one more system call per batch.
      if (static_cast<std::size_t>(n) < kReadChunk) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    fail(n == 0 ? "closed its MAD channel" : std::string("MAD channel: ") + std::strerror(errno));
    return false;
  }
}

bool WorkerTransport::pop(Received& r) {
  while (in_end_ - in_pos_ >= kFrameSize) {
    const bool ok = decode_received_frame(in_.get() + in_pos_, r);
    in_pos_ += kFrameSize;
    if (ok) return true;
    r = Received{};
  }
  if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
  return false;
}

bool WorkerTransport::flush() {
  std::size_t off = 0;
  while (off < out_.size()) {
    const ssize_t n =
        ::send(conn_->mad_fd, out_.data() + off, out_.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{conn_->mad_fd, POLLIN | POLLOUT, 0};
      ::poll(&p, 1, 100);
      if ((p.revents & POLLIN) != 0 && !fill()) return false;
      if (conn_->dead.load(std::memory_order_relaxed)) {
        out_.clear();
        return false;
      }
      continue;
    }
    fail(std::string("MAD channel: ") + std::strerror(errno));
    return false;
  }
  out_.clear();
  return true;
}

}  // namespace ibfx
