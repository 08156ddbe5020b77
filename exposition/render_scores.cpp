#include "exposition/render_scores.h"

#include <cstdio>
#include <cstdlib>

#include "exposition/metric_families.h"
#include "snapshot/snapshot.h"

namespace ibfx {
namespace {

std::string tier_rail(std::string_view tier, int rail) {
  std::string l;
  ExpositionWriter::add_label(l, "tier", tier);
  ExpositionWriter::add_label(l, "rail", rail == kNoRail ? "" : std::to_string(rail));
  return l;
}

// Scores, ratios and rates are estimates over one interval: six significant
// digits say all they know, and cut the aggregates group by a tenth against
// the 17 digits a double round-trips with (issue #15: the group a 10 s job
// scrapes stays under 1 MB at 98k ports).
double estimate(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return std::strtod(text, nullptr);
}

template <typename Histograms>
void histogram(const MetricFamily& family, const Histograms& histograms, ExpositionWriter& w) {
  w.family(family);
  const std::string name(family.name);
  const std::string bucket = name + "_bucket";
  for (const auto& [key, h] : histograms) {
    const std::string l = tier_rail(tier_name(key.first), key.second);
    std::uint64_t cumulative = 0;
    char le[32];
    for (std::size_t b = 0; b < h.kBounds.size(); ++b) {
      cumulative += h.buckets[b];
      std::snprintf(le, sizeof le, "%g", h.kBounds[b]);
      w.sample(bucket, l, "le", le, static_cast<double>(cumulative));
    }
    w.sample(bucket, l, "le", "+Inf", static_cast<double>(h.count));
    w.sample(name + "_sum", l, h.sum);
    w.sample(name + "_count", l, h.count);
  }
}

// Per-switch families carry the switch's node_guid only: its name, tier and
// rail are on infiniband_node_info (group `nodes`), one join away
// (`* on (instance, node_guid) group_left (node_name, tier, rail)`).
// Restating them cost 43 B on each of the 5 x 1,280 per-switch series of
// the 98k-port fabric, a third of the aggregates group a 10 s job scrapes
// (issue #15: under 1 MB).
std::string_view switch_id(const RenderContext& ctx, std::int32_t node) {
  return ctx.node_id(static_cast<std::size_t>(node));
}

// Roots of congestion: the root port, its cause and the other end of its
// cable (where the victims' traffic was going); their scores and victims.
void render_roots(const RenderContext& ctx, ExpositionWriter& w) {
  const Snapshot& s = ctx.snapshot();
  const Fabric& fabric = ctx.fabric();
  const AnalysisResult& result = s.analysis.result;
  struct Root {
    std::string labels;
    std::uint32_t node;
    const CongestionRoot* root;
  };
  std::vector<Root> roots;
  for (const CongestionRoot& r : result.congestion.roots) {
    const PortScore& ps = result.ports[r.port];
    const std::int64_t i = ctx.view_of(ps.node, ps.port_index);
    if (i < 0) continue;
    std::string l = ctx.port_named(static_cast<std::size_t>(i));
    const FabricPort& fp = fabric.nodes[static_cast<std::size_t>(ps.node)].ports[ps.port_index];
    const bool linked =
        fp.linked() && static_cast<std::size_t>(fp.remote_node) < fabric.nodes.size();
    const auto remote = static_cast<std::size_t>(fp.remote_node);
    ExpositionWriter::add_label(l, "cause", cause_name(r.cause));
    // The GUID keys the drill-down: switches without a node-name-map share
    // one description.
    ExpositionWriter::add_label(l, "remote_node_guid",
                                linked ? guid_hex(fabric.nodes[remote].guid) : "");
    ExpositionWriter::add_label(l, "remote_node_name", linked ? s.node_names[remote] : "");
    ExpositionWriter::add_label(l, "remote_port", linked ? std::to_string(fp.remote_port) : "");
    roots.push_back({std::move(l), static_cast<std::uint32_t>(ps.node), &r});
  }
  w.family(families::kRootScore);
  for (const Root& r : roots) {
    w.node(r.node);
    w.sample(families::kRootScore.name, r.labels, estimate(r.root->score));
  }
  w.family(families::kRootVictims);
  for (const Root& r : roots) {
    w.node(r.node);
    w.sample(families::kRootVictims.name, r.labels, static_cast<std::uint64_t>(r.root->victims));
  }
}

void render_uplink_imbalance(const RenderContext& ctx, const CongestionForest& forest,
                             ExpositionWriter& w) {
  w.family(families::kUplinkImbalance);
  for (const UplinkImbalance& u : forest.imbalance) {
    w.node(static_cast<std::uint32_t>(u.node));
    w.sample(families::kUplinkImbalance.name, switch_id(ctx, u.node), estimate(u.ratio));
  }
}

// Hotspot scores: every switch's, then the top ports'.
void render_hotspots(const RenderContext& ctx, const AnalysisResult& result, ExpositionWriter& w) {
  w.family(families::kHotspot);
  for (const SwitchScore& sw : result.switches) {
    const auto n = static_cast<std::size_t>(sw.node);
    std::string l = ctx.node_named(n);
    ExpositionWriter::add_label(l, "port", "");
    ExpositionWriter::add_label(l, "tier", ctx.tier_of(n));
    ExpositionWriter::add_label(l, "rail", ctx.rail_of(n));
    w.node(static_cast<std::uint32_t>(n));
    w.sample(families::kHotspot.name, l, estimate(sw.score));
  }
  for (std::size_t k : result.top_ports) {
    const PortScore& ps = result.ports[k];
    const std::int64_t i = ctx.view_of(ps.node, ps.port_index);
    if (i < 0) continue;
    w.node(static_cast<std::uint32_t>(ps.node));
    w.sample(families::kHotspot.name, ctx.port_named(static_cast<std::size_t>(i)),
             estimate(ps.score));
  }
}

// Tail ratios and their percentiles per (tier, rail); the worst paths.
void render_tails_and_paths(const AnalysisResult& result, ExpositionWriter& w) {
  w.family(families::kTail);
  w.node(ExpositionIndex::kNoNode);
  for (const TailScore& t : result.tails) {
    w.sample(families::kTail.name, tier_rail(tier_name(t.tier), t.rail), t.ratio);
  }
  w.family(families::kPercentile);
  for (const TailScore& t : result.tails) {
    const std::string l = tier_rail(tier_name(t.tier), t.rail);
    w.sample(families::kPercentile.name, l, "percentile", "50", t.p50);
    w.sample(families::kPercentile.name, l, "percentile", "99", t.p99);
  }
  w.family(families::kWorstPath);
  for (const WorstPath& p : result.worst_paths) {
    std::string l;
    ExpositionWriter::add_label(l, "rail", p.rail == kNoRail ? "" : std::to_string(p.rail));
    w.sample(families::kWorstPath.name, l, p.stalled_seconds);
  }
}

// The four families of one aggregate scope, their names built from the scope
// (infiniband_<scope>_stall_ratio_mean, ...); `dt` turns totals into rates.
template <typename LabelsOf>
void render_scope(const char* scope, const std::vector<Aggregate>& list, LabelsOf labels_of,
                  bool per_node, double dt, ExpositionWriter& w) {
  const std::string prefix = std::string("infiniband_") + scope;
  const std::string of = std::string(" of each ") + scope + ".";
  auto one = [&](const std::string& name, const std::string& help, auto value) {
    w.family(name, help, "gauge");
    for (const Aggregate& g : list) {
      w.node(per_node ? static_cast<std::uint32_t>(g.node) : ExpositionIndex::kNoNode);
      w.sample(name, labels_of(g), estimate(value(g)));
    }
  };
  one(prefix + "_stall_ratio_mean", "Mean stall ratio W over the ports" + of,
      [](const Aggregate& g) { return g.mean_stall; });
  one(prefix + "_stall_ratio_max", "Max stall ratio W over the ports" + of,
      [](const Aggregate& g) { return g.max_stall; });
  one(prefix + "_transmit_bytes_per_second", "Bytes transmitted per second by the ports" + of,
      [dt](const Aggregate& g) { return static_cast<double>(g.xmit_bytes) / dt; });
  one(prefix + "_errors_per_second", "Error counter increments per second on the ports" + of,
      [dt](const Aggregate& g) { return static_cast<double>(g.errors) / dt; });
}

// Rail, tier and switch aggregates.
void render_aggregates(const RenderContext& ctx, const SweepAnalysis& a, ExpositionWriter& w) {
  const double dt = a.interval_seconds > 0 ? a.interval_seconds : 1.0;
  render_scope(
      "rail", a.result.by_rail,
      [](const Aggregate& g) {
        std::string l;
        ExpositionWriter::add_label(l, "rail", std::to_string(g.rail));
        return l;
      },
      false, dt, w);
  render_scope(
      "tier", a.result.by_tier,
      [](const Aggregate& g) {
        std::string l;
        ExpositionWriter::add_label(l, "tier", tier_name(g.tier));
        return l;
      },
      false, dt, w);
  // One series per switch, keyed by node_guid (names and grid coordinates
  // joined from infiniband_node_info).
  render_scope(
      "switch", a.result.by_switch, [&](const Aggregate& g) { return switch_id(ctx, g.node); },
      true, dt, w);
}

}  // namespace

RenderGroup ScoresRenderer::group() const { return RenderGroup::kAggregates; }

void ScoresRenderer::render(const RenderContext& ctx, ExpositionWriter& w) const {
  const SweepAnalysis& a = ctx.snapshot().analysis;
  w.node(ExpositionIndex::kNoNode);
  histogram(families::kStallHistogram, a.histograms, w);
  histogram(families::kUtilizationHistogram, a.utilization_histograms, w);
  if (a.result.ports.empty()) return;
  render_roots(ctx, w);
  render_uplink_imbalance(ctx, a.result.congestion, w);
  render_hotspots(ctx, a.result, w);
  render_tails_and_paths(a.result, w);
  render_aggregates(ctx, a, w);
}

}  // namespace ibfx
