#include "views/events_view.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/congestion_event_state.h"

namespace ibfx {

std::optional<double> parse_events_since(std::string_view text, std::string& error) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0) {
    error = "since must be Unix seconds (a non-negative number, e.g. since=1764720000)";
    return std::nullopt;
  }
  return value;
}

std::string render_events_json(const EventList& events_in, std::optional<double> sweep_timestamp,
                               std::optional<double> since) {
  nlohmann::json out;
  out["sweep_timestamp"] = sweep_timestamp ? nlohmann::json(*sweep_timestamp) : nlohmann::json();
  if (since) out["since"] = *since;
  nlohmann::json events = nlohmann::json::array();
  std::size_t active = 0;
  for (const CongestionEvent& e : events_in) {
    if (e.active()) ++active;
    if (since && !e.active() && *e.end < *since) continue;
    events.push_back(event_json(e));
  }
  out["active"] = active;
  out["events"] = std::move(events);
  return dump_json(out) + "\n";
}

}  // namespace ibfx
