// The immutable result of one sweep: what /metrics shows until the next one.
// Built, rendered and compressed on the sweep thread, published with one
// pointer swap; the HTTP side only reads it. A scrape never touches the fabric.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/analysis_config.h"
#include "analysis/scores.h"
#include "analysis/sweep_analyzer.h"
#include "analysis/topology.h"
#include "collectors/counter_accumulator.h"
#include "collectors/fabric.h"
#include "collectors/mad_engine.h"
#include "collectors/sweeper.h"
#include "config/config.h"
#include "daemon/exposition.h"
#include "daemon/gzip.h"
#include "daemon/renderer.h"

namespace ibfx {

struct PortView {
  std::uint32_t node = 0;        // index into Fabric::nodes
  std::uint32_t port_index = 0;  // index into FabricNode::ports
  bool has_counters = false;     // read at least once since start-up
  int device_tick = -1;          // the node's PortSamplesControl.Tick; -1: unknown
  std::array<std::uint64_t, kCounterCount> totals{};
  std::array<std::uint8_t, kCounterCount> present{};  // counter ever read
};

struct ExporterTotals {
  MadEngineStats mad;
  AccumulatorStats accumulator;
  std::uint64_t sweeps = 0;
  std::uint64_t sweeps_incomplete = 0;
  std::uint64_t sweep_overruns = 0;  // a sweep took longer than the interval
  std::uint64_t discoveries = 0;
  std::uint64_t discovery_failures = 0;
};

// What the analysis stage adds to a snapshot (absent until two sweeps).
using SnapshotAnalysis = SweepAnalysis;

struct Snapshot {
  std::shared_ptr<const Fabric> fabric;
  std::shared_ptr<const Topology> topology;  // tier/rail labels; may be null
  SnapshotAnalysis analysis;
  std::vector<std::string> node_names;  // node-name-map, else NodeDescription
  std::vector<PortView> ports;          // every discovered port, node order
  std::vector<NodeSweep> node_status;   // parallel to fabric->nodes
  SweepResult sweep;                    // per-node vectors moved out into node_status
  double sweep_timestamp_seconds = 0;   // Unix time the sweep finished
  double discovery_timestamp_seconds = 0;
  ExporterTotals totals;
  std::string ca_name;
  int ca_port = 0;
  ExportConfig exporting;  // which per-port series to render
  // Per-VL / per-SL totals of the opt-in counter groups (empty when off);
  // rendered by daemon/render_vl_counters.
  std::vector<PortLaneTotals> lanes;
  // The daemon's own metrics (prometheus-cpp registry), serialized when the
  // snapshot was built so that it and the fabric series are one instant.
  std::string exporter_metrics_text;

  // zlib level of gzip(): fast by default, the body is rebuilt every sweep.
  int gzip_level = kGzipFast;

  // Renders the exposition text (0.0.4), handing it to `sink` in pieces of
  // about `chunk_bytes`: the whole text of a big fabric (hundreds of MB) is
  // never held at once.
  void render(const ExpositionWriter::Sink& sink,
              std::size_t chunk_bytes = std::size_t{1} << 20) const;
  // One group's families only (`collect[]=`), recording where each node's
  // series sit into `index` when given.
  void render_group(RenderGroup group, const ExpositionWriter::Sink& sink,
                    std::size_t chunk_bytes = std::size_t{1} << 20,
                    ExpositionIndex* index = nullptr) const;
  // The whole text in one string (tests, --once): a fresh render per call.
  std::string text() const;
  // The exposition gzip-compressed, rendered once and cached: the daemon
  // builds it on the sweep thread before publishing, and every scrape serves
  // it (or inflates it, for clients that refuse gzip).
  const std::string& gzip() const;
  // Length of the uncompressed text (Content-Length of an identity scrape).
  std::size_t text_size() const;

  // One group as a scrape with `collect[]=` serves it: rendered and
  // gzip-compressed once per snapshot (on first use), with the byte ranges
  // of each node's series for `?node=`. Later scrapes only read it.
  struct RenderedGroup {
    std::string gzip;
    std::size_t text_size = 0;
    ExpositionIndex index;
  };
  const RenderedGroup& rendered(RenderGroup group) const;
  // The series of the nodes flagged in `wanted` (parallel to fabric->nodes)
  // in the groups flagged in `groups`, with their families' HELP and TYPE,
  // copied out of the rendered groups (inflated piece by piece).
  std::string node_slice(const std::vector<bool>& wanted,
                         const std::array<bool, kRenderGroupCount>& groups) const;

 private:
  mutable std::array<std::once_flag, kRenderGroupCount> group_once_;
  mutable std::array<RenderedGroup, kRenderGroupCount> groups_;
  mutable std::once_flag gzip_once_;
  mutable std::string gzip_;
  mutable std::size_t text_size_ = 0;
};

// Builds a snapshot from the latest fabric, sweep and accumulator state.
std::shared_ptr<Snapshot> build_snapshot(std::shared_ptr<const Fabric> fabric,
                                         const SweepResult& sweep,
                                         const CounterAccumulator& accumulator,
                                         const NodeNameMap& names, const ExporterTotals& totals);

// Holds the latest snapshot; readers get a shared_ptr that stays valid
// however long the scrape takes.
class SnapshotStore {
 public:
  void publish(std::shared_ptr<const Snapshot> s) {
    std::lock_guard lock(mu_);
    current_ = std::move(s);
  }
  std::shared_ptr<const Snapshot> current() const {
    std::lock_guard lock(mu_);
    return current_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> current_;
};

}  // namespace ibfx
