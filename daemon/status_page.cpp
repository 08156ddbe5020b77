#include "daemon/status_page.h"

#include "exposition/status_html.h"
#include "exposition/status_json.h"
#include "exposition/web_escape.h"
#include "http/gzip_writer.h"

namespace ibfx {
namespace {

StatusBody compressed(std::string text) {
  StatusBody b;
  // The default level: ~100 kB of markup once per sweep, served many times.
  b.gzip = gzip_compress(text);
  b.identity = std::move(text);
  return b;
}

}  // namespace

StatusBodies render_status_bodies(const StatusModel& model) {
  StatusBodies out;
  out.html = compressed(render_status_html(model));
  out.json = compressed(render_status_json(model));
  return out;
}

StatusModel daemon_status_model(const Snapshot& snapshot, std::string_view telemetry_path) {
  StatusModel m = build_status_model(snapshot);
  m.telemetry_path = std::string(telemetry_path);
  // The congestion events the snapshot carries (analysis/congestion_events.h,
  // newest start first), as /events has them.
  if (snapshot.events) {
    std::vector<StatusEvent> events;
    for (const CongestionEvent& e : *snapshot.events) {
      if (events.size() >= kStatusMaxRows) break;
      events.push_back({e.active() ? "active" : "ended", valid_utf8(e.root.name), e.root_port,
                        std::string(cause_name(e.cause)), e.start, e.end.value_or(0),
                        e.peak_score});
    }
    m.events = std::move(events);
  }
  return m;
}

}  // namespace ibfx
