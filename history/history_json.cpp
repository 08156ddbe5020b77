#include "history/history_json.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "fabric/fabric.h"
#include "history/history_downsample.h"

namespace ibfx {
namespace {

using nlohmann::json;

json ratio_or_null(std::uint16_t q) {
  return q == kHistoryNoRatio ? json(nullptr) : json(ratio_value(q));
}

// "jobs": null when no job source was on.
json jobs_or_null(const std::optional<std::vector<std::string>>& jobs) {
  return jobs ? json(*jobs) : json(nullptr);
}

json frame_json(const HistoryFrame& f, const HistorySwitchTable& table) {
  const std::vector<HistoryCell> cells = history_cells_as(f, table);
  json stall = json::array();
  json util = json::array();
  json port = json::array();
  json root_switches = json::array();
  json silent = json::array();
  std::map<std::string, double> tiers;
  std::map<int, double> rails;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const HistoryCell& c = cells[i];
    stall.push_back(ratio_or_null(c.stall));
    util.push_back(ratio_or_null(c.utilization));
    port.push_back(c.port == 0 ? json(nullptr) : json(c.port));
    if ((c.flags & HistoryCell::kRoot) != 0) root_switches.push_back(i);
    if ((c.flags & HistoryCell::kNotAnswering) != 0) silent.push_back(i);
    if (c.stall == kHistoryNoRatio) continue;
    const HistorySwitch& s = table.switches[i];
    double& t = tiers[std::string(tier_name(s.tier))];
    t = std::max(t, ratio_value(c.stall));
    if (s.rail != kNoRail) {
      double& r = rails[s.rail];
      r = std::max(r, ratio_value(c.stall));
    }
  }
  json rail_json = json::object();
  for (const auto& [rail, w] : rails) rail_json[std::to_string(rail)] = w;
  json roots = json::array();
  for (const PageRoot& r : f.roots) roots.push_back(history_root_json(r));
  json jobs = json::array();
  for (const HistoryJob& j : f.jobs) {
    jobs.push_back({{"id", std::to_string(j.id)},
                    {"name", j.name},
                    {"user", j.user},
                    {"stall_ratio_max", j.stall_max}});
  }
  json links = json::array();
  for (const PageLink& l : f.links) links.push_back(history_link_json(l));
  return json{{"time", f.time},
              {"span_seconds", f.span},
              {"sweeps", f.sweeps},
              {"stall_ratio", std::move(stall)},
              {"utilization", std::move(util)},
              {"port", std::move(port)},
              {"root_switches", std::move(root_switches)},
              {"not_answering_switches", std::move(silent)},
              {"tiers", tiers},
              {"rails", std::move(rail_json)},
              {"roots", std::move(roots)},
              {"jobs", std::move(jobs)},
              {"links", std::move(links)},
              {"links_total", f.links_total},
              {"sweep", history_sweep_json(f.sweep)}};
}

}  // namespace

json history_root_json(const PageRoot& r) {
  return json{{"node_guid", guid_hex(r.guid)},
              {"node_name", r.name},
              {"port", r.port},
              {"tier", tier_name(r.tier)},
              {"cause", r.cause},
              {"score", r.score},
              {"victims", r.victims},
              {"stall_ratio", r.stall},
              {"utilization", r.utilization},
              {"remote_node_guid", guid_hex(r.remote.guid)},
              {"remote_node_name", r.remote.name},
              {"remote_port", r.remote.port},
              {"jobs", jobs_or_null(r.jobs)},
              {"sending_jobs", r.sending_jobs}};
}

json history_link_json(const PageLink& l) {
  auto ber = [](const std::optional<double>& b) { return b ? json(*b) : json(nullptr); };
  return json{{"node_guid", guid_hex(l.node.guid)},
              {"node_name", l.node.name},
              {"port", l.node.port},
              {"remote_node_guid", guid_hex(l.remote.guid)},
              {"remote_node_name", l.remote.name},
              {"remote_port", l.remote.port},
              {"remote_read", l.remote.read},
              {"condition", l.condition},
              {"symbol_ber", ber(l.symbol_ber)},
              {"symbol_ber_at_least", l.symbol_ber_at_least},
              {"remote_symbol_ber", ber(l.remote_symbol_ber)},
              {"downs_last_hour", l.downs_last_hour},
              {"since", l.since},
              {"jobs", jobs_or_null(l.jobs)}};
}

json history_sweep_json(const PageSweep& s) {
  return json{{"duration_seconds", s.duration_seconds},
              {"interval_seconds", s.interval_seconds},
              {"completed", s.completed},
              {"scored", s.scored},
              {"nodes", s.nodes},
              {"nodes_swept", s.nodes_swept},
              {"nodes_answering", s.nodes_answering},
              {"ports", s.ports},
              {"ports_read", s.ports_read}};
}

std::string render_history_json(const HistoryFrames& history, double from, double to, double step) {
  std::vector<HistoryFramePtr> chosen;
  for (const HistoryFramePtr& f : history.frames) {
    if (f->time + f->span >= from && f->time <= to) chosen.push_back(f);
  }
  // Too many columns for one answer: a coarser step, chosen so that they fit.
  if (chosen.size() > kHistoryJsonMaxFrames) {
    const double fitting = std::ceil((to - from) / static_cast<double>(kHistoryJsonMaxFrames - 1));
    step = std::max(step, std::max(fitting, 1.0));
  }
  if (step > 0) {
    std::vector<HistoryFramePtr> folded;
    for (const HistoryFramePtr& f : chosen) {
      const double start = history_step_start(f->time, step);
      if (!folded.empty() && folded.back()->time == start) {
        folded.back() = fold_into_step(folded.back().get(), *f, step);
      } else {
        folded.push_back(fold_into_step(nullptr, *f, step));
      }
    }
    chosen = std::move(folded);
  }
  json out;
  out["from"] = from;
  out["to"] = to;
  out["step_seconds"] = step;
  json switches = json::array();
  json frames = json::array();
  if (!chosen.empty()) {
    const HistorySwitchTable& table = *chosen.back()->table;
    for (const HistorySwitch& s : table.switches) {
      switches.push_back({{"node_guid", guid_hex(s.guid)},
                          {"node_name", s.name},
                          {"tier", tier_name(s.tier)},
                          {"rail", s.rail == kNoRail ? json(nullptr) : json(s.rail)},
                          {"unit", s.unit < 0 ? json(nullptr) : json(s.unit + 1)}});
    }
    for (const HistoryFramePtr& f : chosen) frames.push_back(frame_json(*f, table));
  }
  out["switches"] = std::move(switches);
  out["frames"] = std::move(frames);
  out["oldest_seconds"] =
      history.frames.empty() ? json(nullptr) : json(history.frames.front()->time);
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace ibfx
