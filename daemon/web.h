// The HTTP endpoints: the metrics (--web.telemetry-path, /metrics by
// default), /, /-/healthy, /-/ready.
#pragma once

#include <string_view>

#include "daemon/exporter.h"
#include "http/http_server.h"

namespace ibfx {
HttpResponse handle_web(const Exporter& exporter, const HttpRequest& request,
                        std::string_view telemetry_path = "/metrics");
}  // namespace ibfx
