#include "exposition/rendered_exposition.h"

#include <algorithm>
#include <thread>

#include "exposition/deflate_block_cache.h"
#include "exposition/render_events.h"
#include "exposition/render_health.h"
#include "exposition/render_jobs.h"
#include "exposition/render_link_ber.h"
#include "exposition/render_links.h"
#include "exposition/render_nodes.h"
#include "exposition/render_port_counters.h"
#include "exposition/render_port_info.h"
#include "exposition/render_receipts.h"
#include "exposition/render_routes.h"
#include "exposition/render_scores.h"
#include "exposition/render_topology.h"
#include "exposition/render_vl_counters.h"

namespace ibfx {
namespace {

// Every concern of the exposition, in the order the full text lists them.
const std::array<const Renderer*, 13>& renderers() {
  static const TopologyRenderer kTopology;
  static const PortInfoRenderer kPortInfo;
  static const PortCounterRenderer kPortCounters;
  static const LaneCounterRenderer kLaneCounters;
  static const ScoresRenderer kScores;
  static const LinkBerRenderer kLinkBer;
  static const EventsRenderer kEvents;
  static const RoutesRenderer kRoutes;
  static const LinksRenderer kLinks;
  static const JobsRenderer kJobs;
  static const ReceiptsRenderer kReceipts;
  static const NodesRenderer kNodes;
  static const ExporterHealthRenderer kHealth;
  static const std::array<const Renderer*, 13> kAll{
      &kTopology, &kPortInfo, &kPortCounters, &kLaneCounters, &kLinkBer, &kScores, &kEvents,
      &kRoutes,   &kLinks,    &kJobs,         &kReceipts,     &kNodes,   &kHealth};
  return kAll;
}

}  // namespace

std::optional<RenderGroup> render_group_named(std::string_view name) {
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    if (kRenderGroupNames[g] == name) return static_cast<RenderGroup>(g);
  }
  return std::nullopt;
}

void render_group(const Snapshot& snapshot, RenderGroup group, const ExpositionWriter::Sink& sink,
                  std::size_t chunk_bytes, ExpositionIndex* index) {
  std::string buffer;
  buffer.reserve(chunk_bytes + 4096);
  ExpositionWriter w(buffer, sink, chunk_bytes);
  w.set_index(index);
  const RenderContext ctx(snapshot);
  for (const Renderer* r : renderers()) {
    if (r->group() != group) continue;
    // Without a fabric only the daemon's own health has anything to say.
    if (!snapshot.fabric && dynamic_cast<const ExporterHealthRenderer*>(r) == nullptr) continue;
    r->render(ctx, w);
  }
  w.flush();
}

void render_exposition(const Snapshot& snapshot, const ExpositionWriter::Sink& sink,
                       std::size_t chunk_bytes) {
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    render_group(snapshot, static_cast<RenderGroup>(g), sink, chunk_bytes, nullptr);
  }
}

std::string exposition_text(const Snapshot& snapshot) {
  std::string out;
  render_exposition(snapshot, [&out](std::string_view piece) { out += piece; });
  return out;
}

RenderedExposition RenderedExposition::build(const Snapshot& snapshot, DeflateBlockCache* cache,
                                             int level) {
  RenderedExposition out;
  // One compression per core next to this thread, which keeps rendering;
  // a group boundary only starts a new run, the deflate threads stay busy.
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  ParallelDeflater deflater(level, threads, kDeflateBlockBytes, cache);
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    if (g > 0) deflater.end_run();
    render_group(
        snapshot, static_cast<RenderGroup>(g),
        [&deflater](std::string_view piece) { deflater.write(piece); }, std::size_t{1} << 20,
        &out.groups_[g].index);
  }
  std::vector<DeflateRun> runs = deflater.finish();
  // What this build did not use goes: the cache stays one snapshot big.
  if (cache != nullptr) cache->end_generation();
  out.stats_ = Stats{deflater.reused_bytes(), deflater.deflated_bytes()};
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    out.groups_[g].deflate = std::move(runs[g]);
    // Held as long as the snapshot is served: ~24 B per node run, ~6 MB
    // for the ports group at 98k ports; no doubling slack on top.
    out.groups_[g].index.runs.shrink_to_fit();
    out.groups_[g].index.families.shrink_to_fit();
  }
  return out;
}

std::vector<const DeflateRun*> RenderedExposition::runs(const GroupSelection& groups) const {
  std::vector<const DeflateRun*> out;
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    if (groups[g]) out.push_back(&groups_[g].deflate);
  }
  return out;
}

std::uint64_t RenderedExposition::text_size(const GroupSelection& groups) const {
  std::uint64_t size = 0;
  for (const DeflateRun* r : runs(groups)) size += r->length;
  return size;
}

std::string RenderedExposition::node_slice(const std::vector<bool>& wanted,
                                           const GroupSelection& groups) const {
  std::string out;
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    if (!groups[g]) continue;
    const Group& r = groups_[g];
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

}  // namespace ibfx
