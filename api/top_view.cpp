#include "api/top_view.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <numeric>

#include "base/utc_time.h"
#include "snapshot/snapshot.h"
#include "views/status_links.h"

namespace ibfx {
namespace {

std::string far_end(const Snapshot& s, const FabricPort& fp) {
  if (!fp.linked() || static_cast<std::size_t>(fp.remote_node) >= s.node_names.size()) return "-";
  return s.node_names[static_cast<std::size_t>(fp.remote_node)] + ":" +
         std::to_string(fp.remote_port);
}

// printf into `out`; the attribute lets -Wformat check every call.
__attribute__((format(printf, 2, 3))) void line(std::string& out, const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  out += buf;
}

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s / 60 % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llds", s);
  }
  return buf;
}

// The active events, then the last few ended ones (/events has them all).
void render_events_table(std::string& out, const Snapshot& s, std::size_t rows) {
  constexpr std::size_t kEndedShown = 5;
  out += "\nCONGESTION EVENTS (active, then the last ended; all on /events)\n";
  std::vector<const CongestionEvent*> shown;
  std::size_t active = 0;
  for (const CongestionEvent& e : *s.events) {
    if (e.active() && shown.size() < rows) shown.push_back(&e);
    active += e.active() ? 1 : 0;
  }
  std::size_t ended = 0;
  for (const CongestionEvent& e : *s.events) {
    if (!e.active() && ended++ < std::min(kEndedShown, rows)) shown.push_back(&e);
  }
  if (shown.empty()) {
    out += "  (none)\n";
    return;
  }
  line(out, "  %-6s %-6s %-19s %9s %-18s %7s %7s  %s\n", "ID", "STATE", "START (UTC)", "DURATION",
       "CAUSE", "PEAK", "VICTIMS", "ROOT");
  for (const CongestionEvent* e : shown) {
    const std::string root = e->root.name + ":" + std::to_string(e->root_port);
    line(out, "  %-6llu %-6s %-19s %9s %-18s %7.3f %7llu  %s\n",
         static_cast<unsigned long long>(e->id), e->active() ? "active" : "ended",
         utc_time_text(e->start).c_str(), duration_text(e->duration()).c_str(),
         std::string(cause_name(e->cause)).c_str(), e->peak_score,
         static_cast<unsigned long long>(e->peak_victims), root.c_str());
  }
  if (active > rows) line(out, "  ... and %zu more active\n", active - rows);
}

// Slurm's strings are untrusted. A column of a fixed-width table, not log
// text (base/log_text.h): one character per byte, so that escaping cannot
// shift the columns; printable ASCII only, cut to `width`.
std::string table_cell(const std::string& text, std::size_t width) {
  std::string out = text.substr(0, width);
  for (char& c : out) {
    if (c < ' ' || c > '~') c = '?';
  }
  return out;
}

// Who sends into each root (issue #41): the HCA ports whose routes cross
// it, by bytes sent over the interval, with the jobs on their ports.
void render_senders(std::string& out, const Snapshot& s, std::size_t rows) {
  const AnalysisResult& a = s.analysis.result;
  if (a.congestion.roots.empty()) return;
  out +=
      "\nSENDING INTO THE ROOTS (HCA ports routed through each root, by bytes sent; "
      "docs/routes.md)\n";
  if (!s.routes.model) {
    out += "  (routes not read yet, or routes.enabled is off)\n";
    return;
  }
  const Fabric& f = *s.fabric;
  for (const RootSenders& rs : s.routes.senders) {
    if (rs.root >= rows || rs.root >= a.congestion.roots.size()) continue;
    const PortScore& ps = a.ports[a.congestion.roots[rs.root].port];
    const FabricNode& root_node = f.nodes[static_cast<std::size_t>(ps.node)];
    line(out, "  %s:%u  %s destinations routed out, %zu sender ports\n",
         table_cell(s.node_names[static_cast<std::size_t>(ps.node)], 40).c_str(),
         unsigned{root_node.ports[ps.port_index].number},
         rs.routes >= 0 ? std::to_string(rs.routes).c_str() : "?", rs.sources);
    for (const RootSender& sender : rs.top) {
      const auto n = static_cast<std::size_t>(sender.endpoint.node);
      std::string job_ids;
      if (s.jobs.enabled && sender.port != kNoPort) {
        for (const std::size_t j : jobs_on_port(s.jobs.join, sender.port)) {
          job_ids +=
              (job_ids.empty() ? "  jobs " : ",") + std::to_string(s.jobs.join.jobs[j].job_id);
        }
      }
      line(out, "    %-40s %10.3f GB/s%s\n",
           (table_cell(s.node_names[n], 36) + ":" + std::to_string(sender.endpoint.port)).c_str(),
           sender.bytes_per_second / 1e9, job_ids.c_str());
    }
  }
}

// The unhealthy cables (issue #34), worst first: the end whose receiver
// sees the worse direction first. Names are untrusted: printable() them.
void render_links_table(std::string& out, const Snapshot& s, std::size_t rows) {
  out += "\nLINKS (unhealthy cables, worst first; BER into each end; docs/links.md)\n";
  const std::vector<LinkReport>& links = s.links->links;
  if (links.empty()) {
    out += "  (none)\n";
    return;
  }
  line(out, "  %-11s %-32s %-32s %9s %9s %5s  %s\n", "CONDITION", "PORT (RECEIVES WORSE)",
       "FAR END", "BER IN", "BER OUT", "DOWNS", "SINCE (UTC)");
  auto name = [&](const LinkEnd& e) {
    const std::string node =
        e.node != kNoNode && static_cast<std::size_t>(e.node) < s.node_names.size()
            ? s.node_names[static_cast<std::size_t>(e.node)]
            : guid_hex(e.guid);
    return table_cell(node, 28) + ":" + std::to_string(e.port);
  };
  auto ber = [](const LinkDirectionReport& d) {
    char buf[16] = "-";
    if (d.symbol_ber >= 0)
      std::snprintf(buf, sizeof buf, "%s%.1e", d.at_least ? ">" : "", d.symbol_ber);
    return std::string(buf);
  };
  for (std::size_t k = 0; k < links.size() && k < rows; ++k) {
    const LinkReport& l = links[k];
    const bool b_first = l.b_receives_worse();
    // A degraded link says why after its row's fixed columns.
    const std::string why =
        l.has(LinkCondition::kDegraded) ? "  degraded: " + link_degraded_reason(*s.fabric, l) : "";
    line(out, "  %-11s %-32s %-32s %9s %9s %5u  %s%s\n",
         std::string(link_condition_name(l.condition)).c_str(), name(b_first ? l.b : l.a).c_str(),
         name(b_first ? l.a : l.b).c_str(), ber(b_first ? l.into_b : l.into_a).c_str(),
         ber(b_first ? l.into_a : l.into_b).c_str(), l.downs_last_hour,
         utc_time_text(l.since).c_str(), why.c_str());
  }
  if (links.size() > rows) line(out, "  ... and %zu more\n", links.size() - rows);
}

// The running jobs by their worst stall ratio, then their stall seconds.
std::string top_jobs(const Snapshot& s, std::size_t rows) {
  std::string out = "\nJOBS HURT MOST (W: worst stall ratio of their ports, last interval)\n";
  if (!s.jobs.source_up) out += "  (job source down: the last good list, if any, is shown)\n";
  const std::vector<JobPorts>& jobs = s.jobs.join.jobs;
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (jobs[x].stall_ratio_max != jobs[y].stall_ratio_max) {
      return jobs[x].stall_ratio_max > jobs[y].stall_ratio_max;
    }
    return jobs[x].transmit_wait_seconds > jobs[y].transmit_wait_seconds;
  });
  if (order.empty()) return out + "  (no running jobs)\n";
  // Roots per job: how many exported roots have the job in their tree.
  std::vector<std::size_t> roots(jobs.size(), 0);
  for (const RootJobs& r : s.jobs.join.roots) {
    for (const auto& entry : r.jobs) {
      if (entry.first < roots.size()) ++roots[entry.first];
    }
  }
  line(out, "  %-10s %-20s %-12s %-12s %6s %10s %5s %5s\n", "JOB", "NAME", "USER", "PARTITION", "W",
       "STALL_S", "HCAS", "ROOTS");
  for (std::size_t k = 0; k < order.size() && k < rows; ++k) {
    const JobPorts& j = jobs[order[k]];
    line(out, "  %-10llu %-20s %-12s %-12s %6.3f %10.3f %5zu %5zu\n",
         static_cast<unsigned long long>(j.job_id), table_cell(j.name, 20).c_str(),
         table_cell(j.user, 12).c_str(), table_cell(j.partition, 12).c_str(), j.stall_ratio_max,
         j.transmit_wait_seconds, j.hca_ports, roots[order[k]]);
  }
  if (order.size() > rows) line(out, "  ... and %zu more\n", order.size() - rows);
  return out;
}

// The fabric port a score is of.
const FabricPort& scored_port(const Snapshot& s, const PortScore& ps) {
  return s.fabric->nodes[static_cast<std::size_t>(ps.node)].ports[ps.port_index];
}

// "leaf01:17": the port's node name and number.
std::string scored_port_name(const Snapshot& s, const PortScore& ps) {
  return s.node_names[static_cast<std::size_t>(ps.node)] + ":" +
         std::to_string(scored_port(s, ps).number);
}

void render_roots_table(std::string& out, const Snapshot& s, std::size_t rows) {
  const Fabric& f = *s.fabric;
  const AnalysisResult& a = s.analysis.result;
  out += "ROOTS OF CONGESTION (docs/scores.md, \"Root or victim\")\n";
  if (a.ports.empty()) {
    out += "  (none yet: scores need two sweeps)\n";
  } else if (a.congestion.roots.empty()) {
    out += "  (none)\n";
  }
  // JOBS (jobs.source set): the running jobs with ports in the root's tree.
  const bool jobs = s.jobs.enabled;
  std::vector<std::size_t> root_jobs(a.congestion.roots.size(), 0);
  for (const RootJobs& r : s.jobs.join.roots) {
    if (r.root < root_jobs.size()) root_jobs[r.root] = r.jobs.size();
  }
  // LINK: the worst condition of the root's cable (docs/links.md): the
  // port may be slow because of it, as the status page's roots say.
  if (!a.congestion.roots.empty()) {
    line(out, "  %-32s %-20s %7s %8s%s %-11s  %s\n", "PORT", "CAUSE", "SCORE", "VICTIMS",
         jobs ? "     JOBS" : "", "LINK", "FAR END");
  }
  for (std::size_t k = 0; k < a.congestion.roots.size() && k < rows; ++k) {
    const CongestionRoot& r = a.congestion.roots[k];
    const PortScore& ps = a.ports[r.port];
    char job_column[16] = "";
    if (jobs) std::snprintf(job_column, sizeof job_column, " %8zu", root_jobs[k]);
    const std::string link = link_trouble_at(
        *s.links, f.nodes[static_cast<std::size_t>(ps.node)].guid, scored_port(s, ps).number);
    line(out, "  %-32s %-20s %7.3f %8zu%s %-11s  %s\n", scored_port_name(s, ps).c_str(),
         std::string(cause_name(r.cause)).c_str(), r.score, static_cast<std::size_t>(r.victims),
         job_column, link.empty() ? "-" : link.c_str(), far_end(s, scored_port(s, ps)).c_str());
  }
}

// Cumulative error counts of each port (the per-port counters' error half),
// by (node, port index).
std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> port_errors(const Snapshot& s) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> errors;
  for (const PortView& p : s.ports) {
    std::uint64_t e = 0;
    for (std::size_t c = static_cast<std::size_t>(Counter::kSymbolErrors); c < kCounterCount; ++c) {
      e += p.totals[c];
    }
    errors[{p.node, p.port_index}] = e;
  }
  return errors;
}

void render_hottest_ports(std::string& out, const Snapshot& s, std::size_t rows) {
  const AnalysisResult& a = s.analysis.result;
  out += "\nHOTTEST PORTS (W: stall ratio, U: utilisation, last interval)\n";
  std::vector<std::size_t> order(a.ports.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  order.erase(
      std::remove_if(order.begin(), order.end(), [&](std::size_t k) { return !a.ports[k].valid; }),
      order.end());
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return a.ports[x].stall > a.ports[y].stall; });
  if (order.empty()) out += "  (none yet)\n";
  if (!order.empty()) {
    line(out, "  %-32s %6s %6s %-8s %12s  %s\n", "PORT", "W", "U", "TIER", "ERRORS", "FAR END");
  }
  const auto errors = port_errors(s);
  for (std::size_t k = 0; k < order.size() && k < rows; ++k) {
    const PortScore& ps = a.ports[order[k]];
    char u[16] = "-";
    if (ps.utilization_valid) std::snprintf(u, sizeof u, "%.3f", ps.utilization);
    const auto e = errors.find({static_cast<std::uint32_t>(ps.node), ps.port_index});
    line(out, "  %-32s %6.3f %6s %-8s %12llu  %s\n", scored_port_name(s, ps).c_str(), ps.stall, u,
         std::string(tier_name(ps.tier)).c_str(),
         static_cast<unsigned long long>(e == errors.end() ? 0 : e->second),
         far_end(s, scored_port(s, ps)).c_str());
  }
}

// Why nothing may answer: the daemon's own port below Active passes no
// PMA MAD (the subnet manager has not brought it up).
void render_local_port(std::string& out, const Snapshot& s) {
  const Fabric& f = *s.fabric;
  out += "\nLOCAL PORT (the daemon's own HCA port, PortInfo:PortState at the last discovery)\n";
  std::string local = "-";
  if (const auto it = f.by_guid.find(f.local_node); f.local_node != 0 && it != f.by_guid.end()) {
    local = s.node_names[static_cast<std::size_t>(it->second)];
  }
  const std::uint8_t state = f.local_port_state;
  line(out, "  %-32s %s (%u)%s\n", local.c_str(), std::string(port_state_name(state)).c_str(),
       static_cast<unsigned>(state),
       state == 0   ? ""
       : state == 4 ? ""
                    : ": not Active, no PMA MAD passes (is the subnet manager bringing it up?)");
}

void render_silent_nodes(std::string& out, const Snapshot& s, std::size_t rows) {
  const Fabric& f = *s.fabric;
  out += "\nNODES NOT ANSWERING\n";
  std::size_t silent = 0;
  for (std::size_t n = 0; n < f.nodes.size() && n < s.node_status.size(); ++n) {
    if (!s.node_status[n].swept || s.node_status[n].answered) continue;
    if (silent++ < rows) {
      line(out, "  %-32s %s\n", s.node_names[n].c_str(), guid_hex(f.nodes[n].guid).c_str());
    }
  }
  if (silent == 0) out += "  (none)\n";
  if (silent > rows) line(out, "  ... and %zu more\n", silent - rows);
}

}  // namespace

std::string render_top(const Snapshot& s, std::size_t rows) {
  if (!s.fabric) return "no fabric discovered yet\n";
  std::string out;
  render_roots_table(out, s, rows);
  if (s.jobs.enabled) out += top_jobs(s, rows);
  render_senders(out, s, rows);
  render_events_table(out, s, rows);
  render_links_table(out, s, rows);
  render_hottest_ports(out, s, rows);
  render_local_port(out, s);
  render_silent_nodes(out, s, rows);
  return out;
}

}  // namespace ibfx
