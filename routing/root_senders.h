// The senders behind each root of congestion: the HCA ports whose routes
// cross the root port (RouteModel::sources_through), ranked by what they
// transmitted over the interval. A route crossing the port says the sender
// *can* feed it; the rank says who fed the most. A heavy sender whose bytes
// went to another destination ranks too: the tables name where traffic may
// go, not where each byte went (docs/routes.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "analysis/congestion.h"
#include "analysis/port_score.h"
#include "routing/route_model.h"

namespace ibfx {

inline constexpr std::size_t kTopSenders = 10;

struct RootSender {
  RouteEndpoint endpoint;
  std::size_t port = kNoPort;  // index into the analysed ports (kNoPort: not analysed)
  double bytes_per_second = 0;
};

struct RootSenders {
  std::size_t root = 0;         // index into CongestionForest::roots
  std::int64_t routes = -1;     // destinations routed out of the root port (-1: not known)
  std::size_t sources = 0;      // HCA ports whose routes cross it
  std::vector<RootSender> top;  // by bytes_per_second, descending; at most kTopSenders
};

// Remembers sources_through() per port for one model: a root lasts many
// sweeps, its sources do not change until the routes do. Its owner clears
// it when the model is rebuilt.
class SenderCache {
 public:
  const std::vector<RouteEndpoint>& sources(const RouteModel& model, std::int32_t node,
                                            std::uint8_t port);
  void clear() { sources_.clear(); }

 private:
  std::map<std::pair<std::int32_t, std::uint8_t>, std::vector<RouteEndpoint>> sources_;
};

// One entry per root of `forest` (same order) whose port the model knows.
// `ports` and `samples` are the sweep's analysed ports (parallel).
std::vector<RootSenders> senders_of_roots(const RouteModel& model, SenderCache& cache,
                                          const std::vector<PortScore>& ports,
                                          const std::vector<PortSample>& samples,
                                          const CongestionForest& forest);

}  // namespace ibfx
