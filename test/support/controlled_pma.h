// A FakePma (test/support/fake_pma.h) whose answers can be made to take
// `delay_ms`: a fabric the sweep budget cannot cover. Its nodes can be
// changed while a sweep thread sends (with_fake()).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "mad/mad_transport.h"
#include "test/support/fake_pma.h"

namespace ibfx::test {

// Safe to use from the test thread while a sweep thread sends.
class ControlledPma final : public MadTransport {
 public:
  explicit ControlledPma(FakePma& fake) : fake_(fake) {}
  std::atomic<int> delay_ms{0};

  void with_fake(const std::function<void(FakePma&)>& change) {
    std::lock_guard lock(mu_);
    change(fake_);
  }
  bool send(std::uint16_t lid, const MadBytes& mad, std::chrono::milliseconds timeout) override {
    std::lock_guard lock(mu_);
    const bool sent = fake_.send(lid, mad, timeout);
    const auto ready =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms.load());
    for (Received r = fake_.receive({}); r.kind != Received::Kind::kNothing;
         r = fake_.receive({})) {
      answers_.push_back({ready, std::move(r)});
    }
    return sent;
  }
  Received receive(std::chrono::milliseconds wait) override {
    std::unique_lock lock(mu_);
    if (answers_.empty()) return {};
    const auto now = std::chrono::steady_clock::now();
    if (answers_.front().first > now) {
      const auto ready = answers_.front().first;
      lock.unlock();
      std::this_thread::sleep_until(std::min(ready, now + wait));
      lock.lock();
      if (answers_.empty() || answers_.front().first > std::chrono::steady_clock::now()) return {};
    }
    Received r = std::move(answers_.front().second);
    answers_.pop_front();
    return r;
  }

 private:
  std::mutex mu_;
  FakePma& fake_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, Received>> answers_;
};

}  // namespace ibfx::test
