#include "views/history_job_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/link_condition.h"
#include "views/history_heatmap.h"
#include "views/history_sparkline.h"
#include "views/status_model.h"
#include "views/status_page_frame.h"
#include "views/web_escape.h"

namespace ibfx {
namespace {

// "4711 train (alice)" -> "4711".
std::string_view job_id_of(std::string_view job) {
  const auto end = job.find_first_not_of("0123456789");
  return job.substr(0, end == std::string_view::npos ? job.size() : end);
}

struct RootSeen {
  PageRoot peak;
  double first = 0;
  double last = 0;
};

// A link condition on one of the job's ports, over the frames that had it.
struct LinkSeen {
  PageLink link;  // the newest frame's
  double first = 0;
  double last = 0;
};

// First seen (a link to the page as it was then) and last seen, two cells.
void append_seen(std::string& out, double first, double last) {
  out += "<td><a href=\"/?at=" + std::to_string(static_cast<long long>(std::ceil(first))) + "\">" +
         utc_time(first) + "</a></td><td>" + utc_time(last) + "</td>";
}

bool names_job(const std::vector<std::string>& jobs, std::string_view id) {
  return std::any_of(jobs.begin(), jobs.end(),
                     [&](const std::string& j) { return job_id_of(j) == id; });
}

// nullopt (no job source) names none.
bool names_job(const std::optional<std::vector<std::string>>& jobs, std::string_view id) {
  return jobs && names_job(*jobs, id);
}

// The link conditions the history saw on the job's ports (a link whose end
// is one of its HCA ports or the leaf port cabled to one), worst first,
// each with when it was first and last seen.
void append_job_links(
    std::string& out,
    const std::map<std::tuple<std::uint64_t, int, std::string>, LinkSeen>& links) {
  out += "<h2>Link conditions on its ports</h2>\n";
  if (links.empty()) {
    out += "<p>None: the history saw no unhealthy link at its ports (it keeps the worst " +
           std::to_string(kHistoryMaxLinks) + " links of each sweep).</p>\n";
    return;
  }
  std::vector<const LinkSeen*> order;
  order.reserve(links.size());
  for (const auto& [key, seen] : links) order.push_back(&seen);
  auto rank = [](const LinkSeen* l) {
    return static_cast<int>(parse_link_condition(l->link.condition).value_or(LinkCondition::kNone));
  };
  std::stable_sort(order.begin(), order.end(), [&](const LinkSeen* a, const LinkSeen* b) {
    if (rank(a) != rank(b)) return rank(a) > rank(b);
    return a->first < b->first;
  });
  out +=
      "<table id=\"job-links\"><thead><tr><th>Port (receives worse)</th><th>Condition</th>"
      "<th>Far end</th><th>First seen</th><th>Last seen</th></tr></thead><tbody>\n";
  for (const LinkSeen* l : order) {
    out += "<tr><td>";
    append_html(out, l->link.node.name);
    out += " port " + std::to_string(l->link.node.port) + "</td><td>";
    append_html(out, l->link.condition);
    out += "</td><td>";
    append_html(out, l->link.remote.name);
    out += " port " + std::to_string(l->link.remote.port) + "</td>";
    append_seen(out, l->first, l->last);
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

// A table of the roots a job's page lists (held its ports, or fed by
// them), worst peak first; `none` when there are none.
void append_job_roots(std::string& out,
                      const std::map<std::pair<std::uint64_t, int>, RootSeen>& roots,
                      const char* table_id, const char* none) {
  if (roots.empty()) {
    out += std::string("<p>") + none + "</p>\n";
    return;
  }
  std::vector<const RootSeen*> order;
  order.reserve(roots.size());
  for (const auto& [key, seen_root] : roots) order.push_back(&seen_root);
  std::stable_sort(order.begin(), order.end(), [](const RootSeen* a, const RootSeen* b) {
    return a->peak.score > b->peak.score;
  });
  out += std::string("<table id=\"") + table_id +
         "\"><thead><tr><th>Root port</th><th>Cause</th><th>Peak "
         "score</th><th>Victims</th><th>First seen</th><th>Last seen</th></tr></thead><tbody>\n";
  for (const RootSeen* r : order) {
    out += "<tr><td>";
    append_html(out, r->peak.name);
    out += " port " + std::to_string(r->peak.port) + "</td><td>";
    append_html(out, r->peak.cause);
    out += "</td><td class=\"n\">" + fixed(r->peak.score, 2) + "</td><td class=\"n\">" +
           std::to_string(r->peak.victims) + "</td>";
    append_seen(out, r->first, r->last);
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

}  // namespace

void append_job_link(std::string& out, std::string_view job) {
  const std::string_view id = job_id_of(job);
  if (id.empty() || id.size() > 19) {
    append_html(out, job);
    return;
  }
  out += "<a href=\"/?job=";
  out += id;
  out += "\">";
  append_html(out, job);
  out += "</a>";
}

namespace {
std::string percent(double part, double whole) {
  return whole > 0 ? fixed(100.0 * part / whole, 1) + " %" : "-";
}

// The receipt of an ended job (issue #44): its verdict and line, then its
// numbers; every Slurm name escaped. The JSON is one link away.
void append_receipt(std::string& out, const JobReceipt& r) {
  const std::string id = std::to_string(r.job_id);
  out += "<h2>Fabric receipt</h2>\n<p><b>";
  append_html(out, receipt_verdict_name(r.verdict));
  out += "</b>: ";
  append_html(out, r.line);
  out += "</p>\n<table class=\"receipt\">\n<tr><th>Hosts</th><td>";
  constexpr std::size_t kHostsShown = 16;
  for (std::size_t h = 0; h < r.hosts.size() && h < kHostsShown; ++h) {
    if (h > 0) out += ", ";
    append_html(out, r.hosts[h]);
  }
  if (r.hosts.size() > kHostsShown) {
    out += " and " + std::to_string(r.hosts.size() - kHostsShown) + " more";
  }
  out += "</td></tr>\n<tr><th>Ran</th><td>" + utc_time(r.start) + " to " +
         (r.end_known ? utc_time(r.end) : "an unknown end (the job source was down)") + "; seen " +
         fixed(r.observed_seconds, 0) + " s, missed " + fixed(r.missed_seconds, 0) +
         " s</td></tr>\n<tr><th>Stall of its ports</th><td>" +
         percent(r.stall_seconds, r.port_seconds) + " of port-time: self-inflicted " +
         percent(r.self_stall_seconds, r.port_seconds) + ", other jobs " +
         percent(r.other_jobs_stall_seconds, r.port_seconds) + ", unattributed " +
         percent(r.unattributed_stall_seconds, r.port_seconds) + ", in no tree " +
         percent(r.outside_trees_stall_seconds, r.port_seconds) + "</td></tr>\n";
  if (!r.culprits.empty()) {
    out += "<tr><th>Jobs whose trees it stalled in</th><td>";
    for (std::size_t c = 0; c < r.culprits.size(); ++c) {
      const std::string culprit = std::to_string(r.culprits[c].job_id);
      if (c > 0) out += ", ";
      out += "<a href=\"/?job=";
      out += culprit;
      out += "\">";
      out += culprit;
      out += "</a> (";
      out += percent(r.culprits[c].stall_seconds, r.port_seconds);
      out += ")";
    }
    out += "</td></tr>\n";
  }
  if (!r.worst_port.host.empty()) {
    out += "<tr><th>Worst port</th><td>";
    append_html(out, r.worst_port.device + " on " + r.worst_port.host);
    out += " (W " + fixed(r.worst_port.stall_ratio, 3) + ")</td></tr>\n";
  }
  out += "<tr><th>Traffic</th><td>" + fixed(r.bytes_sent / 1e9, 1) + " GB sent, " +
         fixed(r.bytes_received / 1e9, 1) + " GB received";
  if (r.cross_spine_share >= 0) {
    out += "; " + fixed(100.0 * r.cross_spine_share, 1) + " % crossed a spine (from the " +
           std::string(cross_spine_basis_name(r.cross_spine_basis)) + ")";
  }
  out += "</td></tr>\n<tr><th>Link conditions on its ports</th><td>" +
         std::to_string(r.links.size()) + "</td></tr>\n</table>\n<p>As JSON: <a href=\"/jobs/" +
         id + "\">/jobs/" + id + "</a>; as text: <a href=\"/jobs/" + id +
         "?format=text\">?format=text</a>.</p>\n";
}
}  // namespace

namespace {

// The page of a job the history no longer holds: its receipt only.
std::string render_gone_job_html(const std::string& id, std::string_view telemetry_path,
                                 const JobReceipt& receipt) {
  std::string out;
  append_page_start(out, "Slurm job " + id, telemetry_path, 60, history_heatmap_style());
  out += "<h1>Slurm job ";
  append_html(out, id + " " + receipt.name + " (" + receipt.user + ")");
  out += "</h1>\n<p><a href=\"/\">Back to the fabric</a>.</p>\n";
  append_receipt(out, receipt);
  out += "<p>The status page's history holds nothing of it any more.</p>\n";
  append_page_end(out);
  return out;
}

// What the history's frames say of one job.
struct JobSeen {
  const HistoryJob* latest = nullptr;  // null: no frame has the job
  HistoryFramePtr latest_frame;
  double first = 0;
  double last = 0;
  double peak = -1;
  double peak_at = 0;
  std::map<std::pair<std::uint64_t, int>, RootSeen> roots;
  std::map<std::pair<std::uint64_t, int>, RootSeen> fed;  // roots its ports sent into
  std::map<std::tuple<std::uint64_t, int, std::string>, LinkSeen> links;
  std::vector<std::pair<double, double>> stall;  // (time, worst W)
};

// The job's row of frame f: when it was seen, and its worst W.
void note_job(JobSeen& seen, const HistoryFramePtr& f, std::uint64_t job) {
  for (const HistoryJob& j : f->jobs) {
    if (j.id != job) continue;
    if (!seen.latest) seen.first = f->time;
    seen.latest = &j;
    seen.latest_frame = f;
    seen.last = f->time + f->span;
    seen.stall.emplace_back(f->time, j.stall_max);
    if (j.stall_max > seen.peak) {
      seen.peak = j.stall_max;
      seen.peak_at = f->time;
    }
  }
}

// Frame f's link conditions that name the job.
void note_job_links(JobSeen& seen, const HistoryFrame& f, const std::string& id) {
  for (const PageLink& l : f.links) {
    if (!names_job(l.jobs, id)) continue;
    auto [it, inserted] = seen.links.try_emplace({l.node.guid, l.node.port, l.condition},
                                                 LinkSeen{l, f.time, f.time});
    it->second.link = l;
    it->second.last = f.time + f.span;
  }
}

// Frame f's roots that held the job's ports, or that its ports sent into.
void note_job_roots(JobSeen& seen, const HistoryFrame& f, const std::string& id) {
  for (const PageRoot& r : f.roots) {
    for (auto* held : {names_job(r.jobs, id) ? &seen.roots : nullptr,
                       names_job(r.sending_jobs, id) ? &seen.fed : nullptr}) {
      if (held == nullptr) continue;
      auto [it, inserted] = held->try_emplace({r.guid, r.port}, RootSeen{r, f.time, f.time});
      if (!inserted && r.score > it->second.peak.score) it->second.peak = r;
      it->second.last = f.time + f.span;
    }
  }
}

JobSeen job_seen(const HistoryFrames& history, std::uint64_t job, const std::string& id) {
  JobSeen seen;
  for (const HistoryFramePtr& f : history.frames) {
    note_job(seen, f, job);
    note_job_links(seen, *f, id);
    note_job_roots(seen, *f, id);
  }
  return seen;
}

// The job's worst W over its lifetime, as a sparkline of kSparkPoints.
void append_job_stall(std::string& out, const JobSeen& seen) {
  out += "<h2>Worst stall ratio of its ports</h2>\n<p>Peak W " + fixed(seen.peak, 3) + " at " +
         utc_time(seen.peak_at) + ". ";
  const double span = std::max(seen.last - seen.first, 1.0);
  std::vector<double> values(kSparkPoints, 0);
  std::vector<bool> filled(kSparkPoints, false);
  for (const auto& [t, w] : seen.stall) {
    const auto k = static_cast<std::size_t>(
        std::clamp(static_cast<int>((t - seen.first) / span * kSparkPoints), 0, kSparkPoints - 1));
    values[k] = std::max(values[k], w);
    filled[k] = true;
  }
  append_sparkline(out, values, filled, "worst W of the job's ports over its lifetime");
  out += "</p>\n";
}

void append_job_root_tables(std::string& out, const JobSeen& seen) {
  out += "<h2>Roots of congestion that held its ports</h2>\n";
  append_job_roots(out, seen.roots, "job-roots",
                   "None: the history saw no congestion tree over its ports.");
  // Issue #41: the roots whose top senders (by the routes) were its ports.
  out += "<h2>Roots of congestion it sent into</h2>\n";
  append_job_roots(out, seen.fed, "job-fed-roots",
                   "None: its ports were not among the top senders of any root the history saw "
                   "(or the routes were not known).");
}

// Its leaves over its lifetime: the heatmap over time, of them only.
void append_job_heatmap(std::string& out, const std::shared_ptr<const HistoryFrames>& history,
                        const JobSeen& seen) {
  StatusModel m;
  const auto& table = seen.latest_frame->table->switches;
  for (const std::uint32_t s : seen.latest->switches) {
    if (s >= table.size()) continue;
    StatusSwitch sw;
    sw.guid = table[s].guid;
    sw.name = table[s].name;
    sw.tier = table[s].tier;
    sw.rail = table[s].rail;
    m.switches.push_back(std::move(sw));
  }
  lay_out_status_rows(m);
  m.history = history;
  const double span = std::max(seen.last - seen.first, 1.0);
  m.history_window_seconds = span <= 3600 ? 3600 : span <= 6 * 3600 ? 6 * 3600 : 24 * 3600;
  append_history_heatmap(out, m);
}

}  // namespace

std::string render_job_html(const std::shared_ptr<const HistoryFrames>& history, std::uint64_t job,
                            std::string_view telemetry_path, const JobReceipt* receipt) {
  const std::string id = std::to_string(job);
  const JobSeen seen =
      history && !history->frames.empty() ? job_seen(*history, job, id) : JobSeen{};
  if (!seen.latest) return receipt ? render_gone_job_html(id, telemetry_path, *receipt) : "";

  std::string out;
  append_page_start(out, "Slurm job " + id, telemetry_path, 60, history_heatmap_style());
  out += "<h1>Slurm job ";
  append_html(out, id + " " + seen.latest->name + " (" + seen.latest->user + ")");
  out += "</h1>\n<p>Seen from " + utc_time(seen.first) + " to " + utc_time(seen.last) +
         " in the status page's history. <a href=\"/\">Back to the fabric</a>.</p>\n";
  if (receipt) append_receipt(out, *receipt);
  append_job_stall(out, seen);
  append_job_root_tables(out, seen);
  append_job_links(out, seen.links);
  append_job_heatmap(out, history, seen);
  append_page_end(out);
  return out;
}

}  // namespace ibfx
