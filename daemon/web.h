// The HTTP endpoints: /metrics, /, /-/healthy, /-/ready.
#pragma once

#include "daemon/exporter.h"
#include "daemon/http_server.h"

namespace ibfx {
HttpResponse handle_web(const Exporter& exporter, const HttpRequest& request);
}  // namespace ibfx
