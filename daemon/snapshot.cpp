#include "daemon/snapshot.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "daemon/deflate_block_cache.h"
#include "daemon/gzip.h"
#include "daemon/render_health.h"
#include "daemon/render_port_counters.h"
#include "daemon/render_port_info.h"
#include "daemon/render_scores.h"
#include "daemon/render_topology.h"
#include "daemon/render_vl_counters.h"

namespace ibfx {
namespace {

// Every concern of the exposition, in the order the full text lists them.
const std::array<const Renderer*, 6>& renderers() {
  static const TopologyRenderer kTopology;
  static const PortInfoRenderer kPortInfo;
  static const PortCounterRenderer kPortCounters;
  static const LaneCounterRenderer kLaneCounters;
  static const ScoresRenderer kScores;
  static const ExporterHealthRenderer kHealth;
  static const std::array<const Renderer*, 6> kAll{&kTopology,     &kPortInfo, &kPortCounters,
                                                   &kLaneCounters, &kScores,   &kHealth};
  return kAll;
}

}  // namespace

std::optional<RenderGroup> render_group_named(std::string_view name) {
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    if (kRenderGroupNames[g] == name) return static_cast<RenderGroup>(g);
  }
  return std::nullopt;
}

namespace {
std::atomic<std::uint64_t> g_render_count{0};
}  // namespace

std::uint64_t Snapshot::render_count() { return g_render_count.load(); }

void Snapshot::render_group(RenderGroup group, const ExpositionWriter::Sink& sink,
                            std::size_t chunk_bytes, ExpositionIndex* index) const {
  g_render_count.fetch_add(1, std::memory_order_relaxed);
  std::string buffer;
  buffer.reserve(chunk_bytes + 4096);
  ExpositionWriter w(buffer, sink, chunk_bytes);
  w.set_index(index);
  const RenderContext ctx(*this);
  for (const Renderer* r : renderers()) {
    if (r->group() != group) continue;
    // Without a fabric only the daemon's own health has anything to say.
    if (!fabric && dynamic_cast<const ExporterHealthRenderer*>(r) == nullptr) continue;
    r->render(ctx, w);
  }
  w.flush();
}

void Snapshot::render(const ExpositionWriter::Sink& sink, std::size_t chunk_bytes) const {
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    render_group(static_cast<RenderGroup>(g), sink, chunk_bytes, nullptr);
  }
}

std::string Snapshot::text() const {
  std::string out;
  render([&out](std::string_view piece) { out += piece; });
  return out;
}

void Snapshot::compress(DeflateBlockCache* cache) const {
  std::call_once(compress_once_, [this, cache] {
    // One compression per core next to this thread, which keeps rendering;
    // a group boundary only starts a new run, the deflate threads stay busy.
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    ParallelDeflater deflater(gzip_level, threads, kDeflateBlockBytes, cache);
    for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
      if (g > 0) deflater.end_run();
      render_group(
          static_cast<RenderGroup>(g),
          [&deflater](std::string_view piece) { deflater.write(piece); }, std::size_t{1} << 20,
          &groups_[g].index);
    }
    std::vector<DeflateRun> runs = deflater.finish();
    // What this snapshot did not use goes: the cache stays one snapshot big.
    if (cache != nullptr) cache->end_generation();
    compress_stats_ = CompressStats{deflater.reused_bytes(), deflater.deflated_bytes()};
    for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
      groups_[g].deflate = std::move(runs[g]);
      // Held as long as the snapshot is served: ~24 B per node run, ~6 MB
      // for the ports group at 98k ports; no doubling slack on top.
      groups_[g].index.runs.shrink_to_fit();
      groups_[g].index.families.shrink_to_fit();
    }
  });
}

const Snapshot::RenderedGroup& Snapshot::rendered(RenderGroup group) const {
  compress();
  return groups_[static_cast<std::size_t>(group)];
}

std::vector<const DeflateRun*> Snapshot::runs(const GroupSelection& groups) const {
  compress();
  std::vector<const DeflateRun*> out;
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    if (groups[g]) out.push_back(&groups_[g].deflate);
  }
  return out;
}

std::string Snapshot::gzip(const GroupSelection& groups) const { return gzip_member(runs(groups)); }

std::uint64_t Snapshot::text_size(const GroupSelection& groups) const {
  std::uint64_t size = 0;
  for (const DeflateRun* r : runs(groups)) size += r->length;
  return size;
}

std::string Snapshot::node_slice(const std::vector<bool>& wanted,
                                 const GroupSelection& groups) const {
  std::string out;
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    if (!groups[g]) continue;
    const RenderedGroup& r = rendered(static_cast<RenderGroup>(g));
    // The byte ranges to copy, in text order: a family's header before its
    // first wanted run.
    std::vector<ExpositionIndex::Range> ranges;
    std::uint32_t last_family = UINT32_MAX;
    for (const ExpositionIndex::Run& run : r.index.runs) {
      if (run.node >= wanted.size() || !wanted[run.node]) continue;
      if (run.family != last_family) {
        ranges.push_back(r.index.families[run.family]);
        last_family = run.family;
      }
      ranges.push_back(run.bytes);
    }
    if (ranges.empty()) continue;
    DeflateRunReader reader({&r.deflate});
    std::string piece;
    std::size_t offset = 0;  // of piece[0] in the text
    std::size_t next = 0;    // the first range not fully copied
    bool more = true;
    while (more && next < ranges.size()) {
      more = reader.read(piece, std::size_t{1} << 20);
      const std::size_t end = offset + piece.size();
      while (next < ranges.size() && ranges[next].begin < end) {
        const std::size_t from = std::max(ranges[next].begin, offset);
        const std::size_t to = std::min(ranges[next].end, end);
        out.append(piece, from - offset, to - from);
        if (ranges[next].end > end) break;  // continues in the next piece
        ++next;
      }
      offset = end;
    }
  }
  return out;
}

std::shared_ptr<Snapshot> build_snapshot(std::shared_ptr<const Fabric> fabric,
                                         const SweepResult& sweep,
                                         const CounterAccumulator& accumulator,
                                         const NodeNameMap& names) {
  auto s = std::make_shared<Snapshot>();
  if (fabric) {
    const Fabric& f = *fabric;
    s->node_names.reserve(f.nodes.size());
    s->ports.reserve(f.port_count());
    for (std::uint32_t n = 0; n < f.nodes.size(); ++n) {
      const FabricNode& node = f.nodes[n];
      auto it = names.find(node.guid);
      s->node_names.push_back(it != names.end() ? it->second : node.description);
      for (std::uint32_t i = 0; i < node.ports.size(); ++i) {
        PortView v;
        v.node = n;
        v.port_index = i;
        if (const auto* st = accumulator.find(PortKey{node.guid, node.ports[i].number})) {
          v.has_counters = true;
          v.totals = st->total;
          v.present = st->bits;
        }
        s->ports.push_back(v);
      }
    }
    s->node_status = sweep.nodes;
    s->node_status.resize(f.nodes.size());
    s->discovery_timestamp_seconds =
        std::chrono::duration<double>(f.discovered_at.time_since_epoch()).count();
  }
  s->sweep = sweep;
  s->sweep.nodes.clear();
  s->sweep.port_read.clear();
  s->sweep_timestamp_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  s->fabric = std::move(fabric);
  return s;
}

}  // namespace ibfx
