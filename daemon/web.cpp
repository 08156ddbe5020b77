#include "daemon/web.h"

#include <algorithm>
#include <memory>
#include <string>

#include "daemon/gzip.h"

namespace ibfx {
namespace {
// The telemetry path is validated (config/config.cpp: absolute, no spaces,
// '?' or '#'); escaping '&', '<' and '"' keeps the page well-formed anyway.
std::string landing_page(std::string_view telemetry_path) {
  std::string path;
  for (const char c : telemetry_path) {
    if (c == '&') {
      path += "&amp;";
    } else if (c == '<') {
      path += "&lt;";
    } else if (c == '"') {
      path += "&quot;";
    } else {
      path += c;
    }
  }
  return R"(<!DOCTYPE html>
<html><head><title>ibfabric_exporter</title></head>
<body>
<h1>ibfabric_exporter</h1>
<p>InfiniBand fabric telemetry for Prometheus.</p>
<ul>
<li><a href=")" +
         path + "\">" + path +
         R"(</a> &mdash; the latest sweep, in the Prometheus text format</li>
<li><a href="/-/healthy">/-/healthy</a> &mdash; the process is alive</li>
<li><a href="/-/ready">/-/ready</a> &mdash; the first sweep has completed</li>
</ul>
</body></html>
)";
}
constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::size_t kPieceBytes = std::size_t{256} << 10;
}  // namespace

HttpResponse handle_web(const Exporter& exporter, const HttpRequest& request,
                        std::string_view telemetry_path) {
  HttpResponse r;
  if (request.path == telemetry_path) {
    auto snap = exporter.snapshot();
    if (!snap) {
      r.status = 503;
      r.body = "no sweep has completed yet\n";
      return r;
    }
    r.content_type = kExpositionType;
    // The snapshot holds only the gzip form (built on the sweep thread); each
    // scrape streams it, or inflates it for clients that refuse gzip, in
    // pieces: no per-scrape copy of a body that can be hundreds of MB.
    const std::string& gz = snap->gzip();
    if (request.accepts_gzip) {
      r.precompressed_gzip = true;
      r.stream = HttpResponse::BodyStream{
          gz.size(), [snap, offset = std::size_t{0}](std::string& piece) mutable {
            const std::string& all = snap->gzip();
            const std::size_t n = std::min(kPieceBytes, all.size() - offset);
            piece.assign(all, offset, n);
            offset += n;
            return offset < all.size();
          }};
    } else {
      auto reader = std::make_shared<GunzipReader>(gz);
      r.stream = HttpResponse::BodyStream{
          snap->text_size(), [snap, reader](std::string& piece) {
            return reader->read(piece, kPieceBytes);
          }};
    }
    return r;
  }
  if (request.path == "/") {
    r.content_type = "text/html; charset=utf-8";
    r.body = landing_page(telemetry_path);
    return r;
  }
  if (request.path == "/-/healthy") {
    r.body = "OK\n";
    return r;
  }
  if (request.path == "/-/ready") {
    if (exporter.ready()) {
      r.body = "Ready\n";
    } else {
      r.status = 503;
      r.body = "Not ready: the first sweep has not completed\n";
    }
    return r;
  }
  r.status = 404;
  r.body = "404 page not found\n";
  return r;
}

}  // namespace ibfx
