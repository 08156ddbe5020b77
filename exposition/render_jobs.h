// Which jobs the fabric hurts (issue #28): the running Slurm jobs joined
// to the sweep (Snapshot::jobs, jobs/job_join.h), their stall, and the
// jobs in each exported root's tree; the job source's health. Nothing at
// all when jobs.source is none.
#pragma once

#include "exposition/renderer.h"

namespace ibfx {

class JobsRenderer final : public Renderer {
 public:
  RenderGroup group() const override;
  void render(const RenderContext& ctx, ExpositionWriter& w) const override;
};

}  // namespace ibfx
