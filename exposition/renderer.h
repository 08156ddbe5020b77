// One concern of the exposition (node_exporter's Collector): a renderer
// writes its families for one snapshot. Each belongs to one scrape group
// (`/metrics?collect[]=NAME`); the full exposition is every group in order.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "exposition/exposition.h"
#include "exposition/render_context.h"

namespace ibfx {

enum class RenderGroup : int {
  kNodes = 0,       // node info and LIDs, node_up, rail cabling findings
  kPorts = 1,       // per-port counters, state and info
  kAggregates = 2,  // histograms, scores, roots, rail/tier/switch aggregates, exporter health
};
inline constexpr std::size_t kRenderGroupCount = 3;
inline constexpr std::array<std::string_view, kRenderGroupCount> kRenderGroupNames{"nodes", "ports",
                                                                                   "aggregates"};
std::optional<RenderGroup> render_group_named(std::string_view name);

class Renderer {
 public:
  virtual ~Renderer() = default;
  virtual RenderGroup group() const = 0;
  virtual void render(const RenderContext& ctx, ExpositionWriter& w) const = 0;
};

}  // namespace ibfx
