// The immutable result of one sweep: what /metrics shows until the next one.
// Built on the sweep thread, rendered and compressed once on the publisher
// thread (Snapshot::compress), published with one pointer swap; the HTTP
// side only reads it. A scrape never touches the fabric and never renders.
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

// Which scrape groups a selection covers (`collect[]=`), by RenderGroup.
using GroupSelection = std::array<bool, kRenderGroupCount>;
inline constexpr GroupSelection kAllGroups{true, true, true};
static_assert(kRenderGroupCount == 3, "kAllGroups lists every group");

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
  std::string ca_name;
  int ca_port = 0;
  ExportConfig exporting;  // which per-port series to render
  // Per-VL / per-SL totals of the opt-in counter groups (empty when off);
  // rendered by daemon/render_vl_counters.
  std::vector<PortLaneTotals> lanes;
  // The daemon's own metrics (prometheus-cpp registry), serialized when the
  // snapshot was built so that it and the fabric series are one instant.
  std::string exporter_metrics_text;

  // zlib level of compress(): fast by default, the body is rebuilt every sweep.
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

  // The publisher's step, once per snapshot (later calls return at once):
  // renders every group once, in exposition order, each compressed into
  // its own deflate run on the deflate threads next to this one, and
  // records each group's ExpositionIndex (for `?node=`). Every scrape then
  // only reads the result: one group, several or all of them are served as
  // ONE gzip member assembled from the runs (GzipMember), inflated for
  // clients that refuse gzip, or sliced by node. The text itself is never
  // held, and the compressed exposition is held once.
  //
  // `cache`: the deflated blocks of the snapshots compressed before with it
  // (daemon/deflate_block_cache.h); the blocks whose text and dictionary
  // are unchanged are taken from it instead of deflated again, and at the
  // end it keeps the blocks of this snapshot only. The bytes are the same
  // with or without it. Null: everything is deflated. Only the call that
  // compresses uses it; the cache must not be used by another thread
  // meanwhile.
  void compress(DeflateBlockCache* cache = nullptr) const;
  // How much of the text compress() took from its cache, and how much it
  // deflated (zero, zero until it ran; read it on the thread that called
  // compress(), or after synchronizing with it).
  struct CompressStats {
    std::uint64_t reused_bytes = 0;
    std::uint64_t deflated_bytes = 0;
  };
  CompressStats compress_stats() const { return compress_stats_; }
  struct RenderedGroup {
    DeflateRun deflate;  // the group's text as a raw deflate run
    ExpositionIndex index;
  };
  // One group as compress() left it (compressing first when it has not run).
  const RenderedGroup& rendered(RenderGroup group) const;
  // The runs of the groups flagged in `groups`, in exposition order.
  std::vector<const DeflateRun*> runs(const GroupSelection& groups = kAllGroups) const;
  // The selected groups as one gzip member, in one string (tests, benchmarks;
  // a scrape streams GzipMember over runs() instead).
  std::string gzip(const GroupSelection& groups = kAllGroups) const;
  // Length of the selected groups' text (Content-Length of an identity scrape).
  std::uint64_t text_size(const GroupSelection& groups = kAllGroups) const;
  // The series of the nodes flagged in `wanted` (parallel to fabric->nodes)
  // in the groups flagged in `groups`, with their families' HELP and TYPE,
  // copied out of the compressed groups (inflated piece by piece).
  std::string node_slice(const std::vector<bool>& wanted, const GroupSelection& groups) const;

  // How many times any snapshot rendered a group (render_group() calls),
  // process-wide: the publisher's compress() renders each group once per
  // snapshot, a scrape never (the tests count it).
  static std::uint64_t render_count();

 private:
  mutable std::once_flag compress_once_;
  mutable std::array<RenderedGroup, kRenderGroupCount> groups_;
  mutable CompressStats compress_stats_;
};

// Builds a snapshot from the latest fabric, sweep and accumulator state.
std::shared_ptr<Snapshot> build_snapshot(std::shared_ptr<const Fabric> fabric,
                                         const SweepResult& sweep,
                                         const CounterAccumulator& accumulator,
                                         const NodeNameMap& names);

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
