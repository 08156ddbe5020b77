#include "daemon/web.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "api/events_view.h"
#include "api/node_health_view.h"
#include "api/receipt_view.h"
#include "api/route_view.h"
#include "api/top_view.h"
#include "base/guid_text.h"
#include "base/slurm_node.h"
#include "base/utc_time.h"
#include "daemon/history_view.h"
#include "daemon/scrape_query.h"
#include "exposition/gzip.h"
#include "views/status_page_frame.h"
#include "views/switch_view.h"

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
<p>InfiniBand fabric telemetry for Prometheus. The status page appears here after the first sweep.</p>
<ul>
<li><a href=")" +
         path + "\">" + path +
         R"(</a> &mdash; the latest sweep, in the Prometheus text format</li>
<li><a href="/route">/route</a> &mdash; the path of a pair of ports through the switches' forwarding tables, with each hop's W and U (<code>?from=NODE&amp;to=NODE</code>; <code>&amp;format=text</code>)</li>
<li><a href="/top">/top</a> &mdash; roots of congestion, hottest ports, silent nodes (plain text)</li>
<li><a href="/events">/events</a> &mdash; congestion events with their start and end (JSON; <code>?since=</code>UNIX_SECONDS)</li>
<li><a href="/jobs">/jobs</a> &mdash; finished Slurm jobs' fabric receipts; /jobs/ID one job, running or ended (JSON; <code>?format=text</code>, <code>?user=&amp;since=&amp;limit=</code>)</li>
<li><a href="/nodes">/nodes</a> &mdash; hosts whose fabric health is not healthy; /nodes/HOST one host (JSON; <code>?format=text</code>)</li>
<li><a href="/status.json">/status.json</a> &mdash; the status page as JSON</li>
<li><a href="/history.json">/history.json</a> &mdash; the status page's history (JSON; <code>?from=&amp;to=&amp;step=</code>)</li>
<li><a href="/-/healthy">/-/healthy</a> &mdash; the process is alive</li>
<li><a href="/-/ready">/-/ready</a> &mdash; the first sweep has completed</li>
</ul>
</body></html>
)";
}
constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::size_t kPieceBytes = std::size_t{256} << 10;

// 503 until the first sweep is published (/-/ready says the same).
HttpResponse no_sweep_yet() {
  HttpResponse r;
  r.status = 503;
  r.body = "no sweep has completed yet\n";
  return r;
}

HttpResponse bad_request(std::string text) {
  HttpResponse r;
  r.status = 400;
  r.body = std::move(text);
  return r;
}

// An api/ answer (RouteAnswer, NodeHealthAnswer, ReceiptAnswer) as a response.
template <class Answer>
HttpResponse answered(Answer a) {
  HttpResponse r;
  r.status = a.status;
  r.content_type = std::move(a.content_type);
  r.body = std::move(a.body);
  return r;
}

// Streams the selected groups in exposition order, from what the publisher
// compressed (RenderedExposition): for gzip clients ONE gzip member framed
// around the groups' deflate runs (concatenated gzip members are valid RFC
// 1952, but not every client reads past the first), for the others the
// runs inflated piece by piece. Nothing is rendered or compressed here.
HttpResponse serve_groups(const std::shared_ptr<const Publication>& pub,
                          const GroupSelection& groups, bool gzip) {
  HttpResponse r;
  r.content_type = kExpositionType;
  r.precompressed_gzip = gzip;
  if (gzip) {
    // The stream holds the publication: the runs outlive the scrape.
    auto member = std::make_shared<GzipMember>(pub->exposition.runs(groups));
    r.stream = HttpResponse::BodyStream{member->size(), [pub, member](std::string& piece) {
                                          return member->read(piece, kPieceBytes);
                                        }};
  } else {
    auto reader = std::make_shared<DeflateRunReader>(pub->exposition.runs(groups));
    r.stream = HttpResponse::BodyStream{
        pub->exposition.text_size(groups),
        [pub, reader](std::string& piece) { return reader->read(piece, kPieceBytes); }};
  }
  return r;
}

// /metrics with a query: collect[]= groups and node= slices.
HttpResponse targeted(const std::shared_ptr<const Publication>& pub, const ScrapeQuery& q,
                      bool accepts_gzip) {
  GroupSelection groups{};
  for (const std::string& name : q.collect) {
    const auto g = render_group_named(name);
    if (!g) {
      std::string message = "unknown collect[] group \"" + name + "\"; valid: ";
      for (std::size_t i = 0; i < kRenderGroupNames.size(); ++i) {
        if (i > 0) message += ", ";
        message += kRenderGroupNames[i];
      }
      message += "\n";
      return bad_request(message);
    }
    groups[static_cast<std::size_t>(*g)] = true;
  }
  if (q.collect.empty()) groups.fill(true);
  if (q.nodes.empty()) return serve_groups(pub, groups, accepts_gzip);
  const Snapshot* snap = pub->snapshot.get();

  const std::size_t count = snap->fabric ? snap->fabric->nodes.size() : 0;
  std::vector<bool> wanted(count, false);
  for (const std::string& name : q.nodes) {
    const auto guid = parse_guid(name);
    bool found = false;
    for (std::size_t n = 0; n < count; ++n) {
      const FabricNode& node = snap->fabric->nodes[n];
      if (snap->node_names[n] == name || node.description == name || (guid && node.guid == *guid)) {
        wanted[n] = true;
        found = true;
      }
    }
    if (!found) return bad_request("unknown node \"" + name + "\" (a node name or GUID)\n");
  }
  HttpResponse r;
  r.content_type = kExpositionType;
  r.body = pub->exposition.node_slice(wanted, groups);  // small: the server gzips it when asked
  return r;
}
// What the status page's responses carry besides their body: no source
// outside the page itself (views/status_page_frame.h), and no sniffing
// a JSON or HTML body into something else.
void status_headers(HttpResponse& r) {
  r.headers.emplace_back("Content-Security-Policy", std::string(kStatusCsp));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
}

// A body the publisher rendered and compressed once per sweep: a request
// only copies it (a few hundred kB at most), never renders or deflates.
HttpResponse serve_status_body(const StatusBody& body, std::string type, bool gzip) {
  HttpResponse r;
  r.content_type = std::move(type);
  status_headers(r);
  r.precompressed_gzip = gzip;
  r.compressible = false;
  r.body = gzip ? body.gzip : body.identity;
  return r;
}

// The history's answers (daemon/history_view.h) as responses.
HttpResponse history_response(HistoryAnswer a) {
  HttpResponse r;
  r.status = a.status;
  r.content_type = std::move(a.content_type);
  r.body = std::move(a.body);
  if (a.status_page) status_headers(r);
  return r;
}

// GET /: the fabric page of the last publication, or with ?node= one
// node's view, rendered now from the published snapshot (one node: small).
HttpResponse status_page(const Exporter& exporter, const HttpRequest& request,
                         std::string_view telemetry_path) {
  auto pub = exporter.publication();
  HttpResponse r;
  r.content_type = "text/html; charset=utf-8";
  if (!pub) {
    r.body = landing_page(telemetry_path);
    return r;
  }
  if (request.target.find('?') != std::string::npos) {
    const ScrapeQuery q = parse_scrape_query(request.target);
    if (!q.error.empty()) return bad_request(q.error + "\n");
    if (!q.job.empty()) {
      // A job's page: an ended job's receipt first (issue #44), then what
      // the history kept of it.
      std::optional<JobReceipt> receipt;
      if (const auto id = parse_job_id(q.job)) receipt = exporter.receipt_store()->find(*id);
      return history_response(job_view(*pub, q.job, telemetry_path, receipt ? &*receipt : nullptr));
    }
    if (wants_history(q)) {
      return history_response(status_view(*pub, q, true, telemetry_path, unix_seconds_now()));
    }
    if (!q.nodes.empty()) {
      status_headers(r);
      const Snapshot& snap = *pub->snapshot;
      if (const auto node = find_node_named(snap, q.nodes.front())) {
        r.body = render_switch_html(snap, *node, telemetry_path);
      } else {
        r.status = 404;
        r.body = render_unknown_node_html(q.nodes.front(), telemetry_path);
      }
      return r;
    }
  }
  return serve_status_body(pub->status.html, r.content_type, request.accepts_gzip);
}
// GET /route (one pair's path) and /routes (one switch's counts), issue
// #41: the same query checks, then the answer api/route_view.h renders
// from the published snapshot.
HttpResponse routes_page(const Exporter& exporter, const HttpRequest& request) {
  auto snap = exporter.snapshot();
  if (!snap) return no_sweep_yet();
  const ScrapeQuery q = parse_scrape_query(request.target);
  if (!q.error.empty()) return bad_request(q.error + "\n");
  if (!q.format.empty() && q.format != "text" && q.format != "json") {
    return bad_request("format must be text or json\n");
  }
  const bool text = q.format == "text";
  return answered(
      request.path == "/route"
          ? render_route(*snap, {q.from, q.from_port, q.to, q.to_port, text}, unix_seconds_now())
          : render_switch_routes(*snap, q.nodes.empty() ? std::string() : q.nodes.front(), text,
                                 unix_seconds_now()));
}

// GET /nodes, /nodes/<host> (issue #43): a host's fabric health for
// check-node, from the published snapshot. The only query is
// format=text|json.
HttpResponse nodes_page(const Exporter& exporter, const HttpRequest& request) {
  auto snap = exporter.snapshot();
  if (!snap) return no_sweep_yet();
  bool text = false;
  if (const std::size_t q = request.target.find('?'); q != std::string::npos) {
    const std::string_view query = std::string_view(request.target).substr(q + 1);
    if (query == "format=text") {
      text = true;
    } else if (query != "format=json" && !query.empty()) {
      return bad_request("the only query is format=text or format=json\n");
    }
  }
  const double now = unix_seconds_now();
  NodeHealthAnswer a;
  if (request.path == "/nodes") {
    a = render_nodes_health(*snap, now, text);
  } else {
    const std::string_view host = std::string_view(request.path).substr(7);
    if (!valid_node_host(host)) {
      return bad_request("a host is 1 to 255 letters, digits, '.', '-' or '_'\n");
    }
    a = render_node_health(*snap, host, now, text);
  }
  return answered(std::move(a));
}

// GET /jobs, /jobs/<id> (issue #44): the receipts from the store (served
// before the first sweep too: they are restored from the state directory),
// a running job's from the receipts stage's peek (pipeline/receipts_stage.h
// says why that is safe from an HTTP thread).
HttpResponse jobs_page(const Exporter& exporter, const HttpRequest& request) {
  const ScrapeQuery q = parse_scrape_query(request.target);
  if (!q.error.empty()) return bad_request(q.error + "\n");
  const double now = unix_seconds_now();
  return answered(serve_jobs(
      {request.path, q.user, q.since, q.limit, q.format}, *exporter.receipt_store(),
      [&exporter, now](std::uint64_t id, JobReceipt& out) {
        return exporter.peek_receipt(id, now, out);
      },
      exporter.receipts_on()));
}
// The exposition: every group, or the families and nodes the query
// selects.
HttpResponse telemetry_page(const Exporter& exporter, const HttpRequest& request) {
  auto pub = exporter.publication();
  if (!pub) return no_sweep_yet();
  if (request.target.find('?') != std::string::npos) {
    const ScrapeQuery q = parse_scrape_query(request.target);
    if (!q.error.empty()) return bad_request(q.error + "\n");
    if (!q.collect.empty() || !q.nodes.empty()) return targeted(pub, q, request.accepts_gzip);
  }
  // Every group: the same member a selection of all three makes. Each
  // scrape streams it (or inflates it) in pieces: no per-scrape copy of a
  // body that can be hundreds of MB.
  return serve_groups(pub, kAllGroups, request.accepts_gzip);
}

// /top: the worst n rows of each table, as text.
HttpResponse top_page(const Exporter& exporter, const HttpRequest& request) {
  auto snap = exporter.snapshot();
  if (!snap) return no_sweep_yet();
  const ScrapeQuery q = parse_scrape_query(request.target);
  std::size_t rows = kTopDefaultRows;
  if (!q.n.empty()) {
    const auto n = std::strtoul(q.n.c_str(), nullptr, 10);
    if (q.n.find_first_not_of("0123456789") != std::string::npos || n == 0 || n > kTopMaxRows) {
      return bad_request("n must be a number from 1 to " + std::to_string(kTopMaxRows) + "\n");
    }
    rows = n;
  }
  HttpResponse r;
  r.body = render_top(*snap, rows);
  return r;
}

HttpResponse events_page(const Exporter& exporter, const HttpRequest& request) {
  // Before the first sweep, the events restored from the state directory:
  // right after a restart they are what an operator looks for.
  auto snap = exporter.snapshot();
  const auto restored = exporter.restored_events();
  const auto restored_links = exporter.restored_link_events();
  if (!snap && !restored) return no_sweep_yet();
  const ScrapeQuery q = parse_scrape_query(request.target);
  if (!q.error.empty()) return bad_request(q.error + "\n");
  std::optional<double> since;
  if (!q.since.empty()) {
    std::string error;
    since = parse_events_since(q.since, error);
    if (!since) return bad_request(error + "\n");
  }
  HttpResponse r;
  r.content_type = "application/json";
  r.body = snap ? render_events_json(*snap->events, snap->sweep_timestamp_seconds, since,
                                     *snap->link_events, *snap->routes.changes, snap->fabric.get(),
                                     &snap->node_names)
                : render_events_json(*restored, std::nullopt, since,
                                     restored_links ? *restored_links : LinkEventList{});
  return r;
}

// /status.json: the last sweep's, or the history's for a window or a time.
HttpResponse status_json_page(const Exporter& exporter, const HttpRequest& request,
                              std::string_view telemetry_path) {
  auto pub = exporter.publication();
  if (!pub) return no_sweep_yet();
  if (request.target.find('?') != std::string::npos) {
    const ScrapeQuery q = parse_scrape_query(request.target);
    if (!q.error.empty()) return bad_request(q.error + "\n");
    if (!q.job.empty())
      return bad_request("job= is a page of its own (/?job=ID), not a query of /status.json\n");
    if (wants_history(q)) {
      return history_response(status_view(*pub, q, false, telemetry_path));
    }
  }
  return serve_status_body(pub->status.json, "application/json", request.accepts_gzip);
}

HttpResponse history_json_page(const Exporter& exporter, const HttpRequest& request) {
  auto pub = exporter.publication();
  if (!pub) return no_sweep_yet();
  const ScrapeQuery q = parse_scrape_query(request.target);
  if (!q.error.empty()) return bad_request(q.error + "\n");
  return history_response(history_json(*pub, q));
}

// /-/ready: 503 until the first sweep has completed.
HttpResponse ready_page(const Exporter& exporter) {
  HttpResponse r;
  if (exporter.ready()) {
    r.body = "Ready\n";
  } else {
    r.status = 503;
    r.body = "Not ready: the first sweep has not completed\n";
  }
  return r;
}

}  // namespace

HttpResponse handle_web(const Exporter& exporter, const HttpRequest& request,
                        std::string_view telemetry_path) {
  if (request.path == telemetry_path) return telemetry_page(exporter, request);
  if (request.path == "/top") return top_page(exporter, request);
  if (request.path == "/route" || request.path == "/routes") return routes_page(exporter, request);
  if (request.path == "/events") return events_page(exporter, request);
  if (request.path == "/nodes" || request.path.starts_with("/nodes/"))
    return nodes_page(exporter, request);
  if (request.path == "/jobs" || request.path.starts_with("/jobs/"))
    return jobs_page(exporter, request);
  if (request.path == "/") return status_page(exporter, request, telemetry_path);
  if (request.path == "/status.json") return status_json_page(exporter, request, telemetry_path);
  if (request.path == "/history.json") return history_json_page(exporter, request);
  HttpResponse r;
  if (request.path == "/-/healthy") {
    r.body = "OK\n";
    return r;
  }
  if (request.path == "/-/ready") return ready_page(exporter);
  r.status = 404;
  r.body = "404 page not found\n";
  return r;
}

}  // namespace ibfx
