// Snapshots for tests: built by the production build_snapshot(), then
// handed out mutable so that a test can set what a sweep's analysis or the
// config would have put there; and the rendered forms tests compare.
#pragma once

#include <memory>
#include <string>

#include "exposition/rendered_exposition.h"
#include "snapshot/snapshot.h"
#include "test/support/gunzip.h"

namespace ibfx::test {

inline std::shared_ptr<Snapshot> make_snapshot(std::shared_ptr<const ::ibfx::Fabric> fabric,
                                               const SweepResult& sweep,
                                               const CounterAccumulator& accumulator,
                                               const NodeNameMap& names) {
  SnapshotInputs in;
  in.sweep = &sweep;
  in.accumulator = &accumulator;
  if (fabric) in.node_names = node_display_names(*fabric, names);
  in.fabric = std::move(fabric);
  return std::make_shared<Snapshot>(*build_snapshot(std::move(in)));
}

// The selected groups of `snapshot`, rendered and compressed as the
// publisher does, as the one gzip member a scrape of them gets.
inline std::string gzip_of(const Snapshot& snapshot, const GroupSelection& groups = kAllGroups) {
  const RenderedExposition rendered = RenderedExposition::build(snapshot);
  return gzip_member(rendered.runs(groups));
}

}  // namespace ibfx::test
