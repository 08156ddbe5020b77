#include "api/route_view.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/guid_text.h"
#include "base/log_text.h"
#include "routing/route_balance.h"
#include "snapshot/snapshot.h"

namespace ibfx {
namespace {

using nlohmann::json;

// What a request's answer is built of before it is rendered.
struct Failure {
  int status = 0;
  std::string code;     // machine-readable: "unknown_node", "loop", ...
  std::string message;  // for a person; untrusted names already made printable
};

struct End {
  std::int32_t node = kNoNode;
  std::uint8_t port = 0;
  std::uint16_t lid = 0;
};

// The node a request names: its display name, NodeDescription or GUID.
// Two nodes of one name (descriptions are not unique) are ambiguous: the
// GUID tells them apart.
std::optional<std::int32_t> find_node(const Snapshot& s, const std::string& name, const char* which,
                                      Failure& failure) {
  if (name.empty()) {
    failure = {400, "missing_parameter",
               std::string(which) + "= is required (a node name or GUID)"};
    return std::nullopt;
  }
  const Fabric& f = *s.fabric;
  const auto guid = parse_guid(name);
  std::vector<std::int32_t> found;
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    if (guid && f.nodes[n].guid == *guid) return static_cast<std::int32_t>(n);
  }
  for (std::size_t n = 0; n < f.nodes.size(); ++n) {
    if ((n < s.node_names.size() && s.node_names[n] == name) || f.nodes[n].description == name) {
      found.push_back(static_cast<std::int32_t>(n));
    }
  }
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    failure = {404, "unknown_node",
               std::string(which) + "=" + printable(name) + ": no node has that name or GUID"};
  } else {
    failure = {409, "ambiguous_node",
               std::string(which) + "=" + printable(name) + ": " + std::to_string(found.size()) +
                   " nodes have that name; name one by its GUID"};
  }
  return std::nullopt;
}

// The port a request names on `node`, or the first active one of an HCA.
std::optional<End> find_port(const Snapshot& s, std::int32_t node, const std::string& port,
                             const char* which, Failure& failure) {
  const FabricNode& fn = s.fabric->nodes[static_cast<std::size_t>(node)];
  const std::string& name = s.node_names[static_cast<std::size_t>(node)];
  if (fn.type == NodeType::kSwitch) {
    if (!port.empty()) {
      failure = {400, "bad_port",
                 std::string(which) + "_port: " + printable(name) +
                     " is a switch: a route ends at its LID, not at a port"};
      return std::nullopt;
    }
    return End{node, 0, fn.lid};
  }
  if (!port.empty()) {
    const unsigned long number =
        port.find_first_not_of("0123456789") == std::string::npos && port.size() <= 3
            ? std::strtoul(port.c_str(), nullptr, 10)
            : 0;
    if (number == 0 || number > 254) {
      failure = {400, "bad_port", std::string(which) + "_port must be a port number from 1 to 254"};
      return std::nullopt;
    }
    for (const FabricPort& p : fn.ports) {
      if (p.number != number) continue;
      if (!p.linked() || !p.up() || p.lid == 0) {
        failure = {404, "port_not_active",
                   std::string(which) + ": port " + std::to_string(number) + " of " +
                       printable(name) + " has no active link"};
        return std::nullopt;
      }
      return End{node, p.number, p.lid};
    }
    failure = {
        404, "unknown_port",
        std::string(which) + ": " + printable(name) + " has no port " + std::to_string(number)};
    return std::nullopt;
  }
  for (const FabricPort& p : fn.ports) {
    if (p.linked() && p.up() && p.lid != 0) return End{node, p.number, p.lid};
  }
  failure = {404, "port_not_active",
             std::string(which) + ": " + printable(name) + " has no active port with a LID"};
  return std::nullopt;
}

struct Hop {
  RouteHop hop;
  const PortScore* egress = nullptr;  // W and U of the egress port; null: not analysed
};

std::string name_of(const Snapshot& s, std::int32_t node) {
  return node >= 0 && static_cast<std::size_t>(node) < s.node_names.size()
             ? s.node_names[static_cast<std::size_t>(node)]
             : std::string();
}

json end_json(const Snapshot& s, const End& e) {
  const FabricNode& fn = s.fabric->nodes[static_cast<std::size_t>(e.node)];
  return json{{"node_guid", guid_hex(fn.guid)},
              {"node_name", name_of(s, e.node)},
              {"port", e.port},
              {"lid", e.lid}};
}

json number_or_null(const PortScore* p, bool utilization) {
  if (p == nullptr) return nullptr;
  if (utilization) return p->utilization_valid ? json(p->utilization) : json(nullptr);
  return p->valid ? json(p->stall) : json(nullptr);
}

std::string failure_text(const Failure& f) { return "error: " + f.message + "\n"; }

// The model is of another fabric than the snapshot's (a discovery changed
// it): the new one is being built.
const Failure kRebuilding{503, "routes_rebuilding",
                          "the route model is being rebuilt for a new discovery: ask again in a "
                          "sweep or two"};

RouteAnswer answer_failure(const Failure& f, bool text) {
  RouteAnswer a;
  a.status = f.status;
  if (text) {
    a.content_type = "text/plain; charset=utf-8";
    a.body = failure_text(f);
  } else {
    a.content_type = "application/json";
    a.body = json{{"error", f.code}, {"message", f.message}}.dump(-1, ' ', false,
                                                                  json::error_handler_t::replace) +
             "\n";
  }
  return a;
}

// Why a trace stopped, in words, naming the switch.
Failure trace_failure(const Snapshot& s, const RouteTrace& t, const End& to) {
  const std::string at = t.at_node != kNoNode ? printable(name_of(s, t.at_node)) : "";
  const std::string lid = "LID " + std::to_string(to.lid);
  switch (t.error) {
    case TraceError::kNoSourceLink:
      return {404, "port_not_active", "the source port has no active link"};
    case TraceError::kUnknownLid:
      return {404, "unknown_lid", "no discovered port answers at " + lid};
    case TraceError::kNoTable:
      return {503, "no_table", "the forwarding table of " + at + " has not been read yet"};
    case TraceError::kStaleTable:
      return {409, "stale_table",
              at + " stopped answering: its forwarding table may be out of date"};
    case TraceError::kDeadEnd:
      return {409, "no_route",
              at + " forwards " + lid + " nowhere (no entry, or a port without a link)"};
    case TraceError::kLinkDown:
      return {409, "link_down", at + " forwards " + lid + " into a link that is down"};
    case TraceError::kLoop:
      return {409, "loop", "the forwarding tables send " + lid + " round in a loop at " + at};
    case TraceError::kWrongDestination:
      return {409, "wrong_destination",
              "the path for " + lid + " ends at " + at + ", not at its owner"};
    case TraceError::kNone:
      break;
  }
  return {500, "internal", "no error"};
}

// No fabric yet, or no route model: neither request can be answered.
std::optional<Failure> routes_unavailable(const Snapshot& s) {
  if (!s.fabric) return Failure{503, "no_fabric", "no fabric discovered yet"};
  if (s.routes.model == nullptr) {
    return Failure{503, "no_routes",
                   "no forwarding table has been read yet (or routes.enabled is off)"};
  }
  return std::nullopt;
}

// The switch a /routes request names, provided the model is of the
// snapshot's fabric and holds its complete table.
std::optional<std::int32_t> find_routed_switch(const Snapshot& s, const std::string& node,
                                               Failure& failure) {
  const RouteModel* model = s.routes.model.get();
  if (&model->fabric() != s.fabric.get()) {
    // Of an earlier discovery: its node indices are not the snapshot's.
    failure = kRebuilding;
    return std::nullopt;
  }
  const auto n = find_node(s, node, "node", failure);
  if (!n) return std::nullopt;
  if (s.fabric->nodes[static_cast<std::size_t>(*n)].type != NodeType::kSwitch) {
    failure = {400, "not_a_switch",
               "node=" + printable(node) + " is not a switch: only switches route"};
    return std::nullopt;
  }
  const SwitchRoutes* table = model->table(*n);
  if (table == nullptr || !table->complete) {
    failure = {503, "no_table",
               "the forwarding table of " + printable(name_of(s, *n)) + " has not been read yet"};
    return std::nullopt;
  }
  return n;
}

// The seconds since a table was read.
double table_age(const SwitchRoutes& table, double now) {
  return std::max(0.0,
                  now - std::chrono::duration<double>(table.read_at.time_since_epoch()).count());
}

// A switch's port counts as a table for a person: one line a port.
std::string switch_routes_text(const Snapshot& s, std::int32_t n, const SwitchRoutes& table,
                               double age) {
  const FabricNode& fn = s.fabric->nodes[static_cast<std::size_t>(n)];
  const std::vector<PortRoutes>& routes = s.routes.model->port_routes(n);
  std::string body = "routes of " + printable(name_of(s, n)) + " (LID " + std::to_string(fn.lid) +
                     ", LinearFDBTop " + std::to_string(table.linear_fdb_top) + "): table " +
                     std::to_string(static_cast<long long>(age)) + " s old" +
                     (table.stale ? ", STALE (the switch stopped answering)" : "") + "\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-5s %12s %14s  %s\n", "PORT", "DESTINATIONS", "PAIRS",
                "FAR END");
  body += line;
  for (std::size_t i = 0; i < fn.ports.size() && i < routes.size(); ++i) {
    const FabricPort& p = fn.ports[i];
    const std::string far =
        p.linked() ? printable(name_of(s, p.remote_node)) + " port " + std::to_string(p.remote_port)
                   : "-";
    std::snprintf(line, sizeof line, "%-5u %12u %14llu  %s\n", unsigned{p.number},
                  routes[i].destinations, static_cast<unsigned long long>(routes[i].pairs),
                  far.c_str());
    body += line;
  }
  return body;
}

// A switch's port counts as JSON, with its route imbalance (null when the
// balance does not list it).
std::string switch_routes_json(const Snapshot& s, std::int32_t n, const SwitchRoutes& table,
                               double age) {
  const FabricNode& fn = s.fabric->nodes[static_cast<std::size_t>(n)];
  const std::vector<PortRoutes>& routes = s.routes.model->port_routes(n);
  double ratio = 0;
  for (const SwitchRouteBalance& b : s.routes.balance) {
    if (b.node == n) ratio = b.ratio;
  }
  json ports = json::array();
  for (std::size_t i = 0; i < fn.ports.size() && i < routes.size(); ++i) {
    const FabricPort& p = fn.ports[i];
    json j{
        {"port", p.number}, {"destinations", routes[i].destinations}, {"pairs", routes[i].pairs}};
    if (p.linked()) {
      const FabricNode& far = s.fabric->nodes[static_cast<std::size_t>(p.remote_node)];
      j["remote_node_guid"] = guid_hex(far.guid);
      j["remote_node_name"] = name_of(s, p.remote_node);
      j["remote_port"] = p.remote_port;
    } else {
      j["remote_node_guid"] = nullptr;
      j["remote_node_name"] = nullptr;
      j["remote_port"] = nullptr;
    }
    ports.push_back(std::move(j));
  }
  json body{{"node_guid", guid_hex(fn.guid)},
            {"node_name", name_of(s, n)},
            {"lid", fn.lid},
            {"linear_fdb_top", table.linear_fdb_top},
            {"routes_age_seconds", age},
            {"stale", table.stale},
            {"route_imbalance", ratio > 0 ? json(ratio) : json(nullptr)},
            {"ports", std::move(ports)}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

// The two ends a /route request names: from an HCA port, to a port or a
// switch's LID; and a model of the snapshot's fabric to trace them in.
std::optional<std::pair<End, End>> find_route_ends(const Snapshot& s, const RouteQuery& q,
                                                   Failure& failure) {
  const auto from_node = find_node(s, q.from, "from", failure);
  if (!from_node) return std::nullopt;
  if (s.fabric->nodes[static_cast<std::size_t>(*from_node)].type != NodeType::kHca) {
    failure = {400, "not_an_hca",
               "from=" + printable(q.from) + " is not an HCA: a route starts at an HCA port"};
    return std::nullopt;
  }
  const auto to_node = find_node(s, q.to, "to", failure);
  if (!to_node) return std::nullopt;
  const auto from = find_port(s, *from_node, q.from_port, "from", failure);
  if (!from) return std::nullopt;
  const auto to = find_port(s, *to_node, q.to_port, "to", failure);
  if (!to) return std::nullopt;
  if (&s.routes.model->fabric() != s.fabric.get()) {
    // The model is of an earlier discovery than the snapshot's fabric: its
    // node indices would not match (RouteTracker builds the new one in the
    // background; it lands within a sweep or two).
    failure = kRebuilding;
    return std::nullopt;
  }
  return std::pair{*from, *to};
}

// The hops of a trace, each with the W and U of its egress port; and the
// age of the oldest table on the way.
struct ScoredPath {
  std::vector<Hop> hops;
  double age = 0;
};

ScoredPath scored_path(const Snapshot& s, const RouteTrace& trace, double now) {
  ScoredPath path;
  double oldest = now;
  for (const RouteHop& h : trace.hops) {
    Hop hop{h, nullptr};
    const FabricNode& fn = s.fabric->nodes[static_cast<std::size_t>(h.node)];
    for (const PortScore& ps : s.analysis.result.ports) {
      if (ps.node == h.node && ps.port_index < fn.ports.size() &&
          fn.ports[ps.port_index].number == h.out_port) {
        hop.egress = &ps;
        break;
      }
    }
    if (const SwitchRoutes* t = s.routes.model->table(h.node)) {
      oldest =
          std::min(oldest, std::chrono::duration<double>(t->read_at.time_since_epoch()).count());
    }
    path.hops.push_back(hop);
  }
  path.age = std::max(0.0, now - oldest);
  return path;
}

// The route for a person: a line a hop, then why it broke, if it did.
std::string route_text(const Snapshot& s, const End& from, const End& to, const ScoredPath& path,
                       const Failure* broken) {
  auto end_text = [&s](const End& e) {
    std::string t = printable(name_of(s, e.node));
    if (e.port != 0) t += " port " + std::to_string(e.port);
    return t + " (LID " + std::to_string(e.lid) + ")";
  };
  const std::vector<Hop>& hops = path.hops;
  std::string body = "route " + end_text(from) + " -> " + end_text(to) + ": " +
                     std::to_string(hops.size()) + (hops.size() == 1 ? " switch" : " switches") +
                     ", tables " + std::to_string(static_cast<long long>(path.age)) + " s old\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-4s %-40s %4s %4s %7s %7s\n", "HOP", "SWITCH", "IN", "OUT",
                "W", "U");
  body += line;
  for (std::size_t i = 0; i < hops.size(); ++i) {
    const Hop& h = hops[i];
    std::string w = "-";
    std::string u = "-";
    if (h.egress != nullptr && h.egress->valid) {
      w = std::to_string(h.egress->stall).substr(0, 5);
    }
    if (h.egress != nullptr && h.egress->utilization_valid) {
      u = std::to_string(h.egress->utilization).substr(0, 5);
    }
    std::string name = printable(name_of(s, h.hop.node));
    if (name.size() > 40) name.resize(40);
    std::snprintf(line, sizeof line, "%-4zu %-40s %4u %4u %7s %7s\n", i + 1, name.c_str(),
                  unsigned{h.hop.in_port}, unsigned{h.hop.out_port}, w.c_str(), u.c_str());
    body += line;
  }
  if (broken != nullptr) body += failure_text(*broken);
  return body;
}

std::string route_json(const Snapshot& s, const End& from, const End& to, const ScoredPath& path,
                       const RouteTrace& trace, const Failure* broken) {
  json hop_list = json::array();
  for (const Hop& h : path.hops) {
    const FabricNode& fn = s.fabric->nodes[static_cast<std::size_t>(h.hop.node)];
    hop_list.push_back(json{{"node_guid", guid_hex(fn.guid)},
                            {"node_name", name_of(s, h.hop.node)},
                            {"in_port", h.hop.in_port},
                            {"out_port", h.hop.out_port},
                            {"stall_ratio", number_or_null(h.egress, false)},
                            {"utilization", number_or_null(h.egress, true)}});
  }
  json body{{"from", end_json(s, from)},
            {"to", end_json(s, to)},
            {"hops", std::move(hop_list)},
            {"routes_age_seconds", path.age}};
  if (broken != nullptr) {
    // The hops up to where the tables fail, then why: a partial path is
    // labelled as such, never passed off as the route.
    body["error"] = broken->code;
    body["message"] = broken->message;
    if (trace.at_node != kNoNode) {
      body["error_at"] = json{
          {"node_guid", guid_hex(s.fabric->nodes[static_cast<std::size_t>(trace.at_node)].guid)},
          {"node_name", name_of(s, trace.at_node)}};
    }
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

RouteAnswer render_switch_routes(const Snapshot& s, const std::string& node, bool text,
                                 double now) {
  if (const auto unavailable = routes_unavailable(s)) return answer_failure(*unavailable, text);
  Failure failure;
  const auto n = find_routed_switch(s, node, failure);
  if (!n) return answer_failure(failure, text);
  const SwitchRoutes& table = *s.routes.model->table(*n);
  const double age = table_age(table, now);
  RouteAnswer a;
  a.content_type = text ? "text/plain; charset=utf-8" : "application/json";
  a.body = text ? switch_routes_text(s, *n, table, age) : switch_routes_json(s, *n, table, age);
  return a;
}

RouteAnswer render_route(const Snapshot& s, const RouteQuery& q, double now) {
  if (const auto unavailable = routes_unavailable(s)) return answer_failure(*unavailable, q.text);
  Failure failure;
  const auto ends = find_route_ends(s, q, failure);
  if (!ends) return answer_failure(failure, q.text);
  const auto& [from, to] = *ends;
  const RouteTrace trace = s.routes.model->trace({from.node, from.port}, to.lid);
  const ScoredPath path = scored_path(s, trace, now);
  const std::optional<Failure> broken =
      trace.ok() ? std::nullopt : std::optional<Failure>(trace_failure(s, trace, to));

  RouteAnswer a;
  a.status = broken ? broken->status : 200;
  a.content_type = q.text ? "text/plain; charset=utf-8" : "application/json";
  a.body = q.text ? route_text(s, from, to, path, broken ? &*broken : nullptr)
                  : route_json(s, from, to, path, trace, broken ? &*broken : nullptr);
  return a;
}

}  // namespace ibfx
