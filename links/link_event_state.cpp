#include "links/link_event_state.h"

#include <nlohmann/json.hpp>

#include "analysis/json_fields.h"

namespace ibfx {
namespace {

using json_fields::BadField;
using json_fields::count;
using json_fields::guid;
using json_fields::number;
using json_fields::text;
using nlohmann::json;

LinkEvent decode_event(const json& j, const std::string& where) {
  LinkEvent e;
  e.id = count(j, "id", where);
  const std::string condition = text(j, "condition", where);
  const auto c = parse_link_condition(condition);
  if (!c || *c == LinkCondition::kNone) {
    throw BadField(where + ".condition: unknown condition \"" + condition + "\"");
  }
  e.condition = *c;
  e.node = EventNode{guid(j, "node_guid", where), text(j, "node_name", where)};
  e.node_port = static_cast<std::uint8_t>(count(j, "port", where, 255));
  e.remote = EventNode{guid(j, "remote_node_guid", where), text(j, "remote_node_name", where)};
  e.remote_port = static_cast<std::uint8_t>(count(j, "remote_port", where, 255));
  e.start = number(j, "start", where);
  e.last_seen = number(j, "last_seen", where);
  e.end = json_fields::event_end(j, where);
  const json& peak = json_fields::field(j, "peak_ber", where);
  e.peak_ber = peak.is_null() ? -1 : number(j, "peak_ber", where);
  e.downs = static_cast<std::uint32_t>(count(j, "downs", where, UINT32_MAX));
  return e;
}

// One event as the file keeps it.
json event_state_json(const LinkEvent& e) {
  json j;
  j["kind"] = "link";
  j["id"] = e.id;
  j["state"] = e.active() ? "active" : "ended";
  j["condition"] = link_condition_name(e.condition);
  j["node_guid"] = guid_hex(e.node.guid);
  j["node_name"] = e.node.name;
  j["port"] = e.node_port;
  j["remote_node_guid"] = guid_hex(e.remote.guid);
  j["remote_node_name"] = e.remote.name;
  j["remote_port"] = e.remote_port;
  j["start"] = e.start;
  if (e.end) j["end"] = *e.end;  // as a congestion event: absent while active
  j["last_seen"] = e.last_seen;
  j["duration_seconds"] = e.duration();
  j["peak_ber"] = e.peak_ber >= 0 ? json(e.peak_ber) : json();
  j["downs"] = e.downs;
  return j;
}

}  // namespace

std::string encode_link_event_state(const LinkEventTrackerState& state, double saved_at) {
  json j = json_fields::versioned_state(kLinkEventStateFormat, kLinkEventStateVersion, saved_at,
                                        state.next_id);
  json events = json::array();
  for (const LinkEvent& e : state.events) events.push_back(event_state_json(e));
  j["events"] = std::move(events);
  return json_fields::dump(j) + "\n";
}

bool decode_link_event_state(std::string_view text_in, LinkEventTrackerState& state,
                             std::string& error) {
  state = LinkEventTrackerState{};
  LinkEventTrackerState s;
  const bool ok = json_fields::decode_versioned_text(
      text_in, kLinkEventStateFormat, kLinkEventStateVersion, "link event state", error,
      [&s](const json& doc) {
        s.next_id = count(doc, "next_id", "");
        json_fields::for_each_element(doc, "events", [&s](const json& e, const std::string& where) {
          s.events.push_back(decode_event(e, where));
        });
      });
  if (ok) state = std::move(s);
  return ok;
}

}  // namespace ibfx
