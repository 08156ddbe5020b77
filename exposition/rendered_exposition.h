// What the publisher makes of one snapshot, once: every scrape group
// rendered in exposition order, each compressed into its own deflate run,
// with each group's ExpositionIndex (where each node's series sit, for
// `?node=`). Every scrape then only reads it: one group, several or all of
// them are served as ONE gzip member assembled from the runs (GzipMember),
// inflated for clients that refuse gzip, or sliced by node. The text itself
// is never held, and the compressed exposition is held once. Immutable once
// built.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "exposition/exposition.h"
#include "exposition/gzip.h"
#include "exposition/renderer.h"
#include "snapshot/snapshot.h"

namespace ibfx {

class DeflateBlockCache;

// Which scrape groups a selection covers (`collect[]=`), by RenderGroup.
using GroupSelection = std::array<bool, kRenderGroupCount>;
inline constexpr GroupSelection kAllGroups{true, true, true};
static_assert(kRenderGroupCount == 3, "kAllGroups lists every group");

// Renders one group's families of `snapshot` (0.0.4 text), handing it to
// `sink` in pieces of about `chunk_bytes` (the whole text of a big fabric,
// hundreds of MB, is never held at once), and recording where each node's
// series sit into `index` when given.
void render_group(const Snapshot& snapshot, RenderGroup group, const ExpositionWriter::Sink& sink,
                  std::size_t chunk_bytes = std::size_t{1} << 20, ExpositionIndex* index = nullptr);
// Every group in exposition order.
void render_exposition(const Snapshot& snapshot, const ExpositionWriter::Sink& sink,
                       std::size_t chunk_bytes = std::size_t{1} << 20);
// The whole text in one string (tests, benchmarks): a fresh render per call.
std::string exposition_text(const Snapshot& snapshot);

class RenderedExposition {
 public:
  struct Group {
    DeflateRun deflate;  // the group's text as a raw deflate run
    ExpositionIndex index;
  };
  // How much of the text the build took from its cache, and how much it
  // deflated.
  struct Stats {
    std::uint64_t reused_bytes = 0;
    std::uint64_t deflated_bytes = 0;
  };

  RenderedExposition() = default;  // nothing rendered: every group empty

  // Renders every group of `snapshot` once, each compressed on the deflate
  // threads next to the calling one, at zlib `level`.
  //
  // `cache`: the deflated blocks of the builds before it
  // (exposition/deflate_block_cache.h); blocks whose text and dictionary are
  // unchanged are taken from it instead of deflated again, and at the end it
  // keeps the blocks of this build only. The bytes are the same with or
  // without it. Null: everything is deflated. The cache must not be used by
  // another thread meanwhile.
  static RenderedExposition build(const Snapshot& snapshot, DeflateBlockCache* cache = nullptr,
                                  int level = kGzipFast);

  const Group& group(RenderGroup group) const { return groups_[static_cast<std::size_t>(group)]; }
  // The runs of the groups flagged in `groups`, in exposition order; they
  // live as long as this object.
  std::vector<const DeflateRun*> runs(const GroupSelection& groups = kAllGroups) const;
  // Length of the selected groups' text (Content-Length of an identity scrape).
  std::uint64_t text_size(const GroupSelection& groups = kAllGroups) const;
  // The series of the nodes flagged in `wanted` (parallel to the fabric's
  // nodes) in the groups flagged in `groups`, with their families' HELP and
  // TYPE, copied out of the compressed groups (inflated piece by piece).
  std::string node_slice(const std::vector<bool>& wanted, const GroupSelection& groups) const;
  Stats stats() const { return stats_; }

 private:
  std::array<Group, kRenderGroupCount> groups_;
  Stats stats_;
};

}  // namespace ibfx
