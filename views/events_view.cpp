#include "views/events_view.h"

#include <nlohmann/json.hpp>

#include "analysis/congestion_event_state.h"
#include "base/utc_time.h"
#include "links/link_event_state.h"

namespace ibfx {

std::optional<double> parse_events_since(std::string_view text, std::string& error) {
  return parse_unix_seconds("since", text, error);
}

std::string render_events_json(const EventList& events_in, std::optional<double> sweep_timestamp,
                               std::optional<double> since, const LinkEventList& link_events) {
  nlohmann::json out;
  out["sweep_timestamp"] = sweep_timestamp ? nlohmann::json(*sweep_timestamp) : nlohmann::json();
  if (since) out["since"] = *since;
  nlohmann::json events = nlohmann::json::array();
  std::size_t active = 0;
  for (const CongestionEvent& e : events_in) {
    if (e.active()) ++active;
    if (since && !e.active() && *e.end < *since) continue;
    nlohmann::json j = event_json(e);
    j["kind"] = "congestion";
    events.push_back(std::move(j));
  }
  // Link events after the congestion events, each list newest start first.
  for (const LinkEvent& e : link_events) {
    if (e.active()) ++active;
    if (since && !e.active() && *e.end < *since) continue;
    events.push_back(link_event_json(e));
  }
  out["active"] = active;
  out["events"] = std::move(events);
  return dump_json(out) + "\n";
}

}  // namespace ibfx
