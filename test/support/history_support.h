// Hand-made history frames for the history's unit tests: a fabric of named
// switches and one W per switch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "history/history_frame.h"

namespace ibfx::test {

// Switches "sw<first_guid + i>" with GUIDs first_guid + i, leaves of rail i % 2.
inline std::shared_ptr<const HistorySwitchTable> history_table(std::size_t count,
                                                               std::uint64_t first_guid = 1) {
  auto t = std::make_shared<HistorySwitchTable>();
  for (std::size_t i = 0; i < count; ++i) {
    t->switches.push_back(HistorySwitch{first_guid + i, "sw" + std::to_string(first_guid + i),
                                        Tier::kLeaf, static_cast<int>(i % 2),
                                        static_cast<int>(i / 2)});
  }
  return t;
}

// One sweep at `time`: switch i at W stalls[i] (negative: unknown), port i + 1.
inline std::shared_ptr<HistoryFrame> history_frame(
    double time, const std::vector<double>& stalls,
    std::shared_ptr<const HistorySwitchTable> table = nullptr) {
  auto f = std::make_shared<HistoryFrame>();
  f->time = time;
  f->table = table ? std::move(table) : history_table(stalls.size());
  for (std::size_t i = 0; i < stalls.size(); ++i) {
    HistoryCell c;
    if (stalls[i] >= 0) {
      c.stall = quantize_ratio(stalls[i]);
      c.utilization = quantize_ratio(stalls[i] / 2);
    }
    c.port = static_cast<std::uint8_t>(i + 1);
    f->cells.push_back(c);
  }
  f->sweep.nodes = f->sweep.nodes_swept = f->sweep.nodes_answering =
      static_cast<std::uint32_t>(stalls.size());
  f->sweep.scored = true;
  return f;
}

inline PageRoot history_root(std::uint64_t guid, int port, double score,
                             std::string cause = "incast") {
  PageRoot r;
  r.guid = guid;
  r.name = "sw" + std::to_string(guid);
  r.port = port;
  r.tier = Tier::kLeaf;
  r.cause = std::move(cause);
  r.score = score;
  r.victims = static_cast<std::size_t>(score * 2);
  return r;
}

// An unhealthy link of switch `guid` port `port` to an HCA.
inline PageLink history_link(std::uint64_t guid, int port, std::string condition, double since) {
  PageLink l;
  l.node = StatusLinkEnd{guid, "sw" + std::to_string(guid), port, true, kNoNode};
  l.remote =
      StatusLinkEnd{0x1000 + guid, "host" + std::to_string(guid) + " mlx5_0", 1, true, kNoNode};
  l.condition = std::move(condition);
  l.since = since;
  return l;
}

}  // namespace ibfx::test
