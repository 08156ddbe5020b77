#include "views/status_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>

#include "analysis/congestion.h"
#include "analysis/congestion_events.h"
#include "links/link_peers.h"
#include "views/web_escape.h"

namespace ibfx {
namespace {

// Leaves named leaf-r0-2 and leaf-r0-10 sort as people read them: runs of
// digits compare by value.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9';
    const bool db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      std::size_t ie = i;
      std::size_t je = j;
      while (ie < a.size() && a[ie] == '0') ++ie;
      while (je < b.size() && b[je] == '0') ++je;
      std::size_t ae = ie;
      std::size_t be = je;
      while (ae < a.size() && a[ae] >= '0' && a[ae] <= '9') ++ae;
      while (be < b.size() && b[be] >= '0' && b[be] <= '9') ++be;
      if (ae - ie != be - je) return ae - ie < be - je;
      const int c = a.compare(ie, ae - ie, b, je, be - je);
      if (c != 0) return c < 0;
      i = ae;
      j = be;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

struct Names {
  const Snapshot& s;
  std::vector<std::string> clean;  // valid UTF-8 (names are untrusted bytes)

  explicit Names(const Snapshot& snapshot) : s(snapshot) {
    clean.reserve(s.node_names.size());
    for (const std::string& n : s.node_names) clean.push_back(valid_utf8(n));
  }
  StatusFarEnd far_end(const FabricPort& fp) const {
    StatusFarEnd out;
    if (!fp.linked() || static_cast<std::size_t>(fp.remote_node) >= clean.size()) return out;
    const auto r = static_cast<std::size_t>(fp.remote_node);
    out.guid = s.fabric->nodes[r].guid;
    out.name = clean[r];
    out.port = fp.remote_port;
    return out;
  }
};

Tier tier_of(const Snapshot& s, std::size_t n) {
  if (s.analysis.topology && n < s.analysis.topology->tier.size())
    return s.analysis.topology->tier[n];
  return Tier::kUnknown;
}

void add_switches(const Snapshot& s, const Names& names, StatusModel& m) {
  const Fabric& f = *s.fabric;
  std::vector<std::int32_t> cell_of(f.nodes.size(), -1);
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    if (f.nodes[n].type != NodeType::kSwitch) continue;
    StatusSwitch sw;
    sw.node = n;
    sw.guid = f.nodes[n].guid;
    sw.name = names.clean[n];
    sw.tier = tier_of(s, n);
    if (sw.tier == Tier::kLeaf && s.analysis.topology && n < s.analysis.topology->rail.size()) {
      sw.rail = s.analysis.topology->rail[n];
    }
    sw.answering =
        n >= s.node_status.size() || !s.node_status[n].swept || s.node_status[n].answered;
    cell_of[n] = static_cast<std::int32_t>(m.switches.size());
    m.switches.push_back(std::move(sw));
  }
  // The worst port of each switch: its largest W over the last interval.
  for (const PortScore& ps : s.analysis.result.ports) {
    if (!ps.valid || ps.node < 0 || static_cast<std::size_t>(ps.node) >= cell_of.size()) continue;
    const std::int32_t c = cell_of[static_cast<std::size_t>(ps.node)];
    if (c < 0) continue;
    StatusSwitch& sw = m.switches[static_cast<std::size_t>(c)];
    if (sw.valid && ps.stall <= sw.stall) continue;
    sw.valid = true;
    sw.stall = ps.stall;
    sw.utilization_valid = ps.utilization_valid;
    sw.utilization = ps.utilization_valid ? ps.utilization : 0;
    sw.worst_port = f.nodes[static_cast<std::size_t>(ps.node)].ports[ps.port_index].number;
  }

  lay_out_status_rows(m);
}

// The jobs whose HCA ports include analysed port `port` (JobPorts::ports
// lists its HCA ports first, then the leaf ports into them).
std::optional<std::vector<std::string>> jobs_on_port(const Snapshot& s, std::size_t port) {
  if (!s.jobs.enabled) return std::nullopt;
  std::vector<std::string> jobs;
  for (const std::size_t j : jobs_on_port(s.jobs.join, port)) {
    jobs.push_back(job_label(s.jobs.join.jobs[j]));
  }
  return jobs;
}

// The jobs of the root's senders, each once, in the senders' order: what
// the history keeps of them, so that a job that fed the root finds it.
void add_sending_jobs(StatusRoot& root) {
  for (const StatusSender& sender : root.senders) {
    if (sender.jobs) add_missing_jobs(root.sending_jobs, *sender.jobs);
  }
}

// What the routes say of root k (issue #41): its destinations, and who
// sends into it.
void add_route_evidence(const Snapshot& s, const Names& names, std::size_t k, StatusRoot& out) {
  const CongestionRoot& r = s.analysis.result.congestion.roots[k];
  if (r.routes >= 0) {
    out.routes = r.routes;
    out.peer_routes = r.peer_routes;
  }
  const Fabric& f = *s.fabric;
  for (const RootSenders& rs : s.routes.senders) {
    if (rs.root != k) continue;
    if (rs.routes >= 0) out.routes = rs.routes;
    out.sender_ports = rs.sources;
    for (const RootSender& sender : rs.top) {
      const auto n = static_cast<std::size_t>(sender.endpoint.node);
      if (n >= f.nodes.size()) continue;
      StatusSender one;
      one.guid = f.nodes[n].guid;
      one.name = names.clean[n];
      one.port = sender.endpoint.port;
      one.bytes_per_second = sender.bytes_per_second;
      if (sender.port != kNoPort) one.jobs = jobs_on_port(s, sender.port);
      out.senders.push_back(std::move(one));
    }
  }
  add_sending_jobs(out);
}

void add_roots(const Snapshot& s, const Names& names, StatusModel& m) {
  const AnalysisResult& a = s.analysis.result;
  const Fabric& f = *s.fabric;
  for (std::size_t k = 0; k < a.congestion.roots.size(); ++k) {
    const CongestionRoot& r = a.congestion.roots[k];
    if (r.port >= a.ports.size()) continue;
    const PortScore& ps = a.ports[r.port];
    const auto n = static_cast<std::size_t>(ps.node);
    if (n >= f.nodes.size() || ps.port_index >= f.nodes[n].ports.size()) continue;
    const FabricPort& fp = f.nodes[n].ports[ps.port_index];
    StatusRoot out;
    out.guid = f.nodes[n].guid;
    out.name = names.clean[n];
    out.port = fp.number;
    out.tier = ps.tier;
    out.cause = std::string(cause_name(r.cause));
    out.score = r.score;
    out.victims = r.victims;
    out.stall = ps.stall;
    out.utilization = ps.utilization_valid ? ps.utilization : 0;
    out.held = r.held;
    out.remote = names.far_end(fp);
    // The Slurm jobs in the root's tree (issue #28's join), when the daemon
    // has a job source: "<id> <name> (<user>)", untrusted text.
    if (s.jobs.enabled) {
      std::vector<std::string> jobs;
      for (const RootJobs& rj : s.jobs.join.roots) {
        if (rj.root != k) continue;
        for (const auto& [job, ports] : rj.jobs) {
          if (job >= s.jobs.join.jobs.size()) continue;
          jobs.push_back(job_label(s.jobs.join.jobs[job]));
        }
      }
      out.jobs = std::move(jobs);
    }
    add_route_evidence(s, names, k, out);
    m.roots.push_back(std::move(out));
    for (StatusSwitch& sw : m.switches) sw.root = sw.root || sw.node == n;
  }
}

void add_hottest(const Snapshot& s, const Names& names, StatusModel& m) {
  const AnalysisResult& a = s.analysis.result;
  const Fabric& f = *s.fabric;
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < a.ports.size(); ++k) {
    const PortScore& ps = a.ports[k];
    if (ps.valid && ps.node >= 0 && static_cast<std::size_t>(ps.node) < f.nodes.size() &&
        ps.port_index < f.nodes[static_cast<std::size_t>(ps.node)].ports.size()) {
      order.push_back(k);
    }
  }
  const std::size_t keep = std::min(order.size(), kStatusHottestRows);
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
      [&](std::size_t x, std::size_t y) { return a.ports[x].stall > a.ports[y].stall; });
  for (std::size_t k = 0; k < keep; ++k) {
    const PortScore& ps = a.ports[order[k]];
    const auto n = static_cast<std::size_t>(ps.node);
    const FabricPort& fp = f.nodes[n].ports[ps.port_index];
    StatusPort out;
    out.guid = f.nodes[n].guid;
    out.name = names.clean[n];
    out.port = fp.number;
    out.tier = ps.tier;
    out.stall = ps.stall;
    out.utilization_valid = ps.utilization_valid;
    out.utilization = ps.utilization_valid ? ps.utilization : 0;
    out.remote = names.far_end(fp);
    m.hottest.push_back(std::move(out));
  }
}

// PortInfo:PortPhysicalState (IBA 14.2.5.6): 5 LinkUp; 2 Polling and 3
// Disabled are what an uncabled or switched-off port shows; 4
// PortConfigurationTraining and 6 LinkErrorRecovery are a cable that does
// not come up.
bool link_down(const FabricPort& fp) {
  if (fp.up()) return false;
  return fp.linked() || fp.phys_state == 4 || fp.phys_state == 6;
}

void add_links(const Snapshot& s, const Names& names, StatusModel& m) {
  const Fabric& f = *s.fabric;
  // The ports below what both ends enable or below the median rate of their
  // peers (links/link_peers.h: the recording rule's grouping), by the port
  // they are.
  std::map<const FabricPort*, SlowerLink> slower;
  for (const SlowerLink& l : links_slower_than_they_should(f, s.analysis.topology.get())) {
    slower.emplace(&f.nodes[static_cast<std::size_t>(l.node)].ports[l.port_index], l);
  }
  auto below = [&](std::size_t /*n*/, const FabricPort& fp) { return slower.contains(&fp); };
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    for (const FabricPort& fp : f.nodes[n].ports) {
      const bool down = link_down(fp);
      if (!down && !below(n, fp)) continue;
      // Once per cable: a link both of whose ends qualify is listed from the
      // end with the smaller (GUID, port).
      if (fp.linked() && static_cast<std::size_t>(fp.remote_node) < f.nodes.size()) {
        const auto r = static_cast<std::size_t>(fp.remote_node);
        const FabricNode& rn = f.nodes[r];
        const auto rp = std::find_if(rn.ports.begin(), rn.ports.end(), [&](const FabricPort& p) {
          return p.number == fp.remote_port;
        });
        const bool other_counts = rp != rn.ports.end() && (link_down(*rp) || below(r, *rp));
        if (other_counts &&
            std::make_pair(rn.guid, rp->number) < std::make_pair(f.nodes[n].guid, fp.number)) {
          continue;
        }
      }
      ++m.degraded_total;
      if (m.degraded_links.size() >= kStatusMaxRows) continue;
      StatusLink out;
      out.guid = f.nodes[n].guid;
      out.name = names.clean[n];
      out.port = fp.number;
      out.remote = names.far_end(fp);
      out.down = down;
      out.width = std::string(link_width_name(fp.width_active));
      out.speed = std::string(link_speed_name(fp));
      out.rate_gbps = down ? 0 : link_rate_gbps(fp);
      if (const auto it = slower.find(&fp); !down && it != slower.end()) {
        const SlowerLink& l = it->second;
        out.peers_rate_gbps = l.peers_rate_gbps;
        out.reason =
            degraded_reason(l.below_enabled, std::string(link_width_name(l.enabled.width_active)),
                            std::string(link_speed_name(l.enabled)), l.below_peers, l.rate_gbps,
                            l.peers_rate_gbps, out.width, out.speed);
      }
      m.degraded_links.push_back(std::move(out));
    }
  }
}

void add_sweep(const Snapshot& s, const Names& names, StatusModel& m) {
  StatusSweep& w = m.sweep;
  w.timestamp_seconds = s.sweep_timestamp_seconds;
  w.duration_seconds = s.sweep_totals.duration_seconds;
  w.interval_seconds = s.analysis.interval_seconds;
  w.completed = s.sweep_totals.completed;
  w.ports_read = s.sweep_totals.ports_read;
  w.stale_nodes = s.sweep_totals.stale_nodes;
  w.scored = !s.analysis.result.ports.empty();
  if (s.routes.model) {
    const RouteTables& t = s.routes.model->tables();
    w.routes_known = true;
    w.route_full_read_seconds = t.full_read_seconds;
    w.route_changes = s.routes.changes_total;
    double oldest = s.sweep_timestamp_seconds;
    for (const SwitchRoutes& table : t.switches) {
      ++w.route_tables;
      if (table.stale) ++w.route_tables_stale;
      if (!table.complete) {
        ++w.route_tables_incomplete;
        continue;
      }
      oldest =
          std::min(oldest, std::chrono::duration<double>(table.read_at.time_since_epoch()).count());
    }
    w.route_oldest_age_seconds = std::max(0.0, s.sweep_timestamp_seconds - oldest);
  }
  const Fabric& f = *s.fabric;
  w.nodes = f.nodes.size();
  w.ports = f.port_count();
  for (std::size_t n = 0; n < f.nodes.size() && n < s.node_status.size(); ++n) {
    const NodeSweep& st = s.node_status[n];
    if (!st.swept) continue;
    ++w.nodes_swept;
    if (st.answered) {
      ++w.nodes_answering;
      continue;
    }
    ++m.not_answering_total;
    if (m.not_answering.size() < kStatusMaxRows) {
      m.not_answering.push_back({f.nodes[n].guid, names.clean[n],
                                 std::string(node_type_name(f.nodes[n].type)), f.nodes[n].present});
    }
  }
  if (const auto it = f.by_guid.find(f.local_node); it != f.by_guid.end()) {
    const auto n = static_cast<std::size_t>(it->second);
    if (n < f.nodes.size()) {
      w.local_name = names.clean[n];
      for (const FabricPort& fp : f.nodes[n].ports) {
        if (!w.local_port_state.empty()) w.local_port_state += ", ";
        w.local_port_state += "port " + std::to_string(fp.number) + " " +
                              std::string(port_state_name(fp.state)) + " " +
                              std::string(link_width_name(fp.width_active)) + " " +
                              std::string(link_speed_name(fp));
      }
    }
  }
  // About one sweep: the interval W and U were measured over.
  if (w.interval_seconds > 0) {
    m.refresh_seconds = std::clamp(static_cast<int>(std::ceil(w.interval_seconds)), 5, 300);
  }
}

void add_events(const Snapshot& s, StatusModel& m) {
  if (!s.events) return;
  std::vector<StatusEvent> events;
  for (const CongestionEvent& e : *s.events) {
    if (events.size() >= kStatusMaxRows) break;
    events.push_back(status_event(e));
  }
  m.events = std::move(events);
}

}  // namespace

void lay_out_status_rows(StatusModel& m) {
  m.rows.clear();
  // Leaves by rail (kNoRail last), then spines, cores, the rest.
  std::map<int, std::vector<std::size_t>> leaves;
  std::vector<std::size_t> spines;
  std::vector<std::size_t> cores;
  std::vector<std::size_t> others;
  for (std::size_t c = 0; c < m.switches.size(); ++c) {
    const StatusSwitch& sw = m.switches[c];
    if (sw.tier == Tier::kLeaf) {
      leaves[sw.rail == kNoRail ? std::numeric_limits<int>::max() : sw.rail].push_back(c);
    } else if (sw.tier == Tier::kSpine) {
      spines.push_back(c);
    } else if (sw.tier == Tier::kCore) {
      cores.push_back(c);
    } else {
      others.push_back(c);
    }
  }
  auto by_name = [&](std::vector<std::size_t>& v) {
    std::sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) {
      return natural_less(m.switches[a].name, m.switches[b].name);
    });
  };
  for (auto& [rail, v] : leaves) {
    by_name(v);
    for (std::size_t k = 0; k < v.size(); ++k) m.switches[v[k]].unit = static_cast<int>(k);
    m.rows.push_back({rail == std::numeric_limits<int>::max() ? std::string("leaves, no rail")
                                                              : "rail " + std::to_string(rail),
                      v});
  }
  by_name(spines);
  by_name(cores);
  by_name(others);
  if (!spines.empty()) m.rows.push_back({"spine", std::move(spines)});
  if (!cores.empty()) m.rows.push_back({"core", std::move(cores)});
  if (!others.empty()) m.rows.push_back({"other switches", std::move(others)});
}

StatusEvent status_event(const CongestionEvent& e) {
  StatusEvent row;
  row.id = e.id;
  row.state = e.active() ? "active" : "ended";
  row.name = valid_utf8(e.root.name);
  row.port = e.root_port;
  row.cause = std::string(cause_name(e.cause));
  row.start = e.start;
  row.end = e.end;
  row.duration_seconds = e.duration();
  row.peak_score = e.peak_score;
  row.peak_victims = e.peak_victims;
  for (const std::uint64_t job : e.jobs) row.jobs.push_back(std::to_string(job));
  row.jobs_truncated = e.jobs_truncated;
  return row;
}

StatusModel build_status_model(const Snapshot& s) {
  StatusModel m;
  m.sweep.timestamp_seconds = s.sweep_timestamp_seconds;
  if (!s.fabric) return m;
  const Names names(s);
  add_sweep(s, names, m);
  add_switches(s, names, m);
  add_roots(s, names, m);
  add_hottest(s, names, m);
  add_links(s, names, m);
  m.links = status_links(s, names.clean, kStatusMaxRows);
  m.links_total = s.links->links.size();
  m.unhealthy_nodes = status_unhealthy_nodes(s, kStatusMaxRows);
  for (StatusRoot& r : m.roots) r.link_condition = link_trouble_at(*s.links, r.guid, r.port);
  std::vector<bool> trouble(s.fabric ? s.fabric->nodes.size() : 0, false);
  for (const LinkReport& l : s.links->links) {
    if (!l.unhealthy()) continue;  // a length outlier alone is not trouble
    for (const LinkEnd* e : {&l.a, &l.b}) {
      if (e->node != kNoNode && static_cast<std::size_t>(e->node) < trouble.size()) {
        trouble[static_cast<std::size_t>(e->node)] = true;
      }
    }
  }
  for (StatusSwitch& sw : m.switches)
    sw.link_trouble = sw.node < trouble.size() && trouble[sw.node];
  add_events(s, m);
  return m;
}

}  // namespace ibfx
