// Polls `pred` until it holds or `limit` passes: for tests of code that
// runs on its own threads (Exporter, FabricDiscovery).
#pragma once

#include <chrono>
#include <thread>

namespace ibfx::test {

template <typename Pred>
bool wait_for(Pred pred, std::chrono::seconds limit = std::chrono::seconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace ibfx::test
