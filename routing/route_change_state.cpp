#include "routing/route_change_state.h"

#include <nlohmann/json.hpp>

#include "analysis/json_fields.h"
#include "fabric/fabric.h"

namespace ibfx {
namespace {

using json_fields::count;
using json_fields::number;
using nlohmann::json;

json port_json(const PortRouteDelta& d) {
  return {{"node_guid", guid_hex(d.node_guid)},
          {"port", d.port},
          {"before", d.before},
          {"after", d.after},
          {"link_up", d.link_up}};
}

PortRouteDelta decode_port(const json& j, const std::string& where) {
  PortRouteDelta d;
  d.node_guid = json_fields::guid(j, "node_guid", where);
  d.port = static_cast<std::uint8_t>(count(j, "port", where, 255));
  d.before = static_cast<std::uint32_t>(count(j, "before", where, UINT32_MAX));
  d.after = static_cast<std::uint32_t>(count(j, "after", where, UINT32_MAX));
  const json& up = json_fields::field(j, "link_up", where);
  if (!up.is_boolean()) throw json_fields::BadField(where + ".link_up: not true or false");
  d.link_up = up.get<bool>();
  return d;
}

std::vector<PortRouteDelta> decode_ports(const json& j, const char* key) {
  std::vector<PortRouteDelta> out;
  json_fields::for_each_element(j, key, [&out](const json& p, const std::string& where) {
    out.push_back(decode_port(p, where));
  });
  return out;
}

}  // namespace

std::string encode_route_change_state(const RouteChangeState& state, double saved_at) {
  json j = json_fields::versioned_state(kRouteChangeStateFormat, kRouteChangeStateVersion, saved_at,
                                        state.next_id);
  j["changes_total"] = state.changes_total;
  json changes = json::array();
  for (const RouteChange& c : state.changes) {
    json lost = json::array();
    for (const PortRouteDelta& d : c.lost) lost.push_back(port_json(d));
    json gained = json::array();
    for (const PortRouteDelta& d : c.gained) gained.push_back(port_json(d));
    changes.push_back({{"id", c.id},
                       {"at", c.at},
                       {"destinations_moved", c.destinations_moved},
                       {"entries_changed", c.entries_changed},
                       {"switches_changed", c.switches_changed},
                       {"lost", std::move(lost)},
                       {"gained", std::move(gained)}});
  }
  j["changes"] = std::move(changes);
  return json_fields::dump(j) + "\n";
}

bool decode_route_change_state(std::string_view text, RouteChangeState& state, std::string& error) {
  state = RouteChangeState{};
  RouteChangeState s;
  const bool ok = json_fields::decode_versioned_text(
      text, kRouteChangeStateFormat, kRouteChangeStateVersion, "route event state", error,
      [&s](const json& doc) {
        s.next_id = count(doc, "next_id", "");
        s.changes_total = count(doc, "changes_total", "");
        json_fields::for_each_element(
            doc, "changes", [&s](const json& j, const std::string& where) {
              RouteChange c;
              c.id = count(j, "id", where);
              c.at = number(j, "at", where);
              c.destinations_moved = count(j, "destinations_moved", where);
              c.entries_changed = count(j, "entries_changed", where);
              c.switches_changed = count(j, "switches_changed", where);
              c.lost = decode_ports(j, "lost");
              c.gained = decode_ports(j, "gained");
              s.changes.push_back(std::move(c));
            });
      });
  if (ok) state = std::move(s);
  return ok;
}

}  // namespace ibfx
