// Plays a traffic scenario on a simulated fabric in real time, for the
// tests whose monitoring stack must see the fabric's traffic while they
// read it (the dashboards and remote-write tests).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "test/scenario/scenario.h"
#include "test/sim/sim_fabric.h"

namespace ibfx::test {

// Plays the scenario on the simulated fabric, one simulated second per wall
// second, from construction until destruction: the stall ratios and hotspot
// scores are computed from the counter deltas between two consecutive
// sweeps, so the fabric must keep its traffic for as long as panels are
// read. (A driver that stopped would leave every stall ratio at 0 one sweep
// later, and the top-N panels ranking ports that all score 0.)
// `on_step(i)` runs after step i's console lines.
class Animation {
 public:
  Animation(ScenarioDriver& driver, SimFabric& sim, std::function<void(int)> on_step)
      : thread_([this, &driver, &sim, on_step = std::move(on_step)](std::stop_token stop) {
          auto next = std::chrono::steady_clock::now();
          for (int i = 0; !stop.stop_requested() && !driver.done(); ++i) {
            try {
              for (const std::string& line : driver.step()) sim.console(line);
              if (on_step) on_step(i);
            } catch (const std::exception& e) {
              std::lock_guard lock(mu_);
              error_ = e.what();
              break;
            }
            {
              std::lock_guard lock(mu_);
              steps_ = i + 1;
              lag_ = std::max(lag_, std::chrono::steady_clock::now() - next);
            }
            cv_.notify_all();
            next += std::chrono::seconds(1);
            std::unique_lock lock(mu_);
            cv_.wait_until(lock, stop, next, [] { return false; });
          }
          cv_.notify_all();
        }) {}
  Animation(const Animation&) = delete;
  Animation& operator=(const Animation&) = delete;

  // Waits until `n` steps have been played; false if the animation failed.
  bool wait_steps(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return steps_ >= n || !error_.empty(); });
    return steps_ >= n;
  }
  std::string status() {
    std::lock_guard lock(mu_);
    return std::to_string(steps_) + " steps played, the slowest done " +
           std::to_string(std::chrono::duration<double>(lag_).count()) + " s after its start time" +
           (error_.empty() ? "" : ", then failed: " + error_);
  }

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  int steps_ = 0;
  std::chrono::steady_clock::duration lag_{};
  std::string error_;
  std::jthread thread_;  // last: stopped and joined before the members above go
};

}  // namespace ibfx::test
