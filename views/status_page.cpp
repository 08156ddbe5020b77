#include "views/status_page.h"

#include "http/gzip_writer.h"
#include "views/status_html.h"
#include "views/status_json.h"

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
  return m;
}

}  // namespace ibfx
